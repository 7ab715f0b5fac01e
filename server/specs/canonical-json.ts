import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level: equal documents give equal text. */
export function toCanonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

/** The id Git gives a file's bytes (`git hash-object`): SHA-1 of `blob <length>\0<bytes>`. */
export function gitBlobSha(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.byteLength}\0`).update(bytes).digest("hex");
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The content address of a value: `sha256:<hex>` of its canonical JSON. */
export function contentAddress(value: unknown): string {
  return `sha256:${sha256Hex(toCanonicalJson(value))}`;
}
