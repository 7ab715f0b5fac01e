import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Seals secrets for storage: AES-256-GCM under the service's encryption key, a fresh 96-bit nonce
 * per value, and the value's place (`context`, e.g. `environments.headers/env_…`) as associated
 * data, so a sealed value copied into another row or setting does not open there.
 *
 * A sealed value is text: `v1.<key id>.<nonce>.<ciphertext>.<tag>` (base64url), the key id being
 * the first 8 hex digits of the key's SHA-256, which says which key a value needs without
 * revealing it.
 */
export interface Sealer {
  readonly keyId: string;
  seal(plaintext: string, context: string): string;
  /** Throws `UnsealError` if the value was not sealed by this key for this context, or was altered. */
  open(sealed: string, context: string): string;
}

export const KEY_BYTES = 32;

export class UnsealError extends Error {
  override name = "UnsealError";
}

export const keyIdOf = (key: Buffer) => createHash("sha256").update(key).digest("hex").slice(0, 8);

/** The key id a sealed value names, or undefined if it is not a sealed value. */
export const sealedKeyId = (sealed: string): string | undefined => /^v1\.([0-9a-f]{8})\./.exec(sealed)?.[1];

export function makeSealer(key: Buffer): Sealer {
  if (key.length !== KEY_BYTES) throw new Error(`An encryption key has ${KEY_BYTES} bytes, not ${key.length}`);
  const keyId = keyIdOf(key);
  return {
    keyId,
    seal(plaintext, context) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, nonce);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return ["v1", keyId, nonce, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
        .join(".");
    },
    open(sealed, context) {
      const parts = sealed.split(".");
      if (parts.length !== 5 || parts[0] !== "v1") throw new UnsealError(`Not a sealed value (${context})`);
      if (parts[1] !== keyId) {
        throw new UnsealError(`${context} was sealed with key ${parts[1]}, not this key (${keyId})`);
      }
      const [nonce, ciphertext, tag] = parts.slice(2).map((part) => Buffer.from(part, "base64url")) as [
        Buffer,
        Buffer,
        Buffer,
      ];
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: 16 });
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
      } catch {
        throw new UnsealError(`${context} does not open with key ${keyId}: altered, or sealed for another place`);
      }
    },
  };
}

/** An encryption key as an operator writes it: 32 bytes in base64 (`openssl rand -base64 32`) or hex. */
export function parseEncryptionKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  return key.length === KEY_BYTES &&
    (key.toString("base64") === trimmed || key.toString("hex") === trimmed.toLowerCase())
    ? key
    : undefined;
}
