import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

/**
 * The JSON Canonicalization Scheme (RFC 8785): keys sorted by UTF-16 code units at every level,
 * numbers as ECMAScript writes them; equal documents give equal text. It refuses what I-JSON
 * refuses (lone surrogates, NaN): values are checked for those where they come in
 * (`loneSurrogateAt`), so reaching the throw here is a bug.
 */
export function toCanonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("A value with no JSON form has no canonical JSON.");
  return text;
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
