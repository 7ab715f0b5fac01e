import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Tokens look like `assure_<key id>_<secret>`: recognisable to secret scanners, and the id finds the row. */
const TOKEN_PATTERN = /^assure_([0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;

export interface MintedToken {
  keyId: string;
  token: string;
  secretHash: Buffer;
}

export function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

/** A new key: 256 random bits of secret; only its SHA-256 is stored. */
export function mintToken(keyId: string): MintedToken {
  const secret = randomBytes(32).toString("base64url");
  const bare = keyId.replace(/^key_/, "");
  return { keyId, token: `assure_${bare}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseToken(token: string): { keyId: string; secret: string } | undefined {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { keyId: `key_${match[1]}`, secret: match[2]! } : undefined;
}

export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const given = hashSecret(secret);
  return given.length === storedHash.length && timingSafeEqual(given, storedHash);
}
