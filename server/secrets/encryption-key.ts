import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError } from "../errors.js";
import { KEY_BYTES, parseEncryptionKey } from "./sealer.js";

/** The key is missing, malformed, exposed, or not the one the database's secrets were sealed with. */
export class EncryptionKeyError extends ConfigError {
  override name = "EncryptionKeyError";
}

/** Where the key lives when ASSURE_ENCRYPTION_KEY is not set: beside the database, named after it. */
export const keyFileOf = (dbPath: string) => `${dbPath}.key`;

export interface LoadEncryptionKeyOptions {
  dbPath: string;
  /** ASSURE_ENCRYPTION_KEY, parsed. */
  configured?: Buffer | undefined;
  /** The key id the database's secrets are sealed with, if it has any. */
  sealedWith?: string | undefined;
}

/**
 * The key that seals the database's secrets: ASSURE_ENCRYPTION_KEY if set; else the key file beside
 * the database, which is created (mode 0600) only for a database that has nothing sealed yet. A
 * database whose key is lost stops the start with an error: a new key would leave its secrets
 * unreadable without saying so.
 */
export function loadEncryptionKey({ dbPath, configured, sealedWith }: LoadEncryptionKeyOptions): Buffer {
  if (configured) return configured;
  if (dbPath === ":memory:") return randomBytes(KEY_BYTES);
  const file = keyFileOf(dbPath);
  const existing = readKeyFile(file);
  if (existing) return existing;
  if (sealedWith) {
    throw new EncryptionKeyError(
      `The database's secrets are sealed with key ${sealedWith}, and neither ASSURE_ENCRYPTION_KEY nor ${file} holds a key. ` +
        "Restore that key (the file, or the variable); assure will not start with a new one, which could not open them.",
    );
  }
  const key = randomBytes(KEY_BYTES);
  mkdirSync(dirname(file), { recursive: true });
  // Written whole under a temporary name, then linked into place: a process starting at the same
  // moment finds either no key file or a complete one, and the first link wins.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(draft, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readKeyFile(file)!;
    throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  return key;
}

function readKeyFile(file: string): Buffer | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    throw new EncryptionKeyError(
      `${file} can be read by other users (mode ${(mode & 0o777).toString(8)}): run chmod 600 on it.`,
    );
  }
  const key = parseEncryptionKey(readFileSync(file, "utf8"));
  if (!key) throw new EncryptionKeyError(`${file} does not hold a key: ${KEY_BYTES} bytes in base64 or hex.`);
  return key;
}

/**
 * Rotating the key file: the new key is staged beside it (`<key file>.next`) before the secrets are
 * sealed again, and promoted over it after they committed. A start in between finds the key that
 * opens the database among the two, and finishes or undoes the rotation (`openSealer`).
 */
export const stagedKeyFileOf = (dbPath: string) => `${keyFileOf(dbPath)}.next`;

export function stageKey(dbPath: string, key: Buffer): void {
  writeFileSync(stagedKeyFileOf(dbPath), `${key.toString("base64")}\n`, { mode: 0o600 });
}

export function readStagedKey(dbPath: string): Buffer | undefined {
  return readKeyFile(stagedKeyFileOf(dbPath));
}

export function promoteStagedKey(dbPath: string): void {
  renameSync(stagedKeyFileOf(dbPath), keyFileOf(dbPath));
}

export function discardStagedKey(dbPath: string): void {
  rmSync(stagedKeyFileOf(dbPath), { force: true });
}
