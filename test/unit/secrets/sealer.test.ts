import { randomBytes } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { UnsealError, keyIdOf, makeSealer, parseEncryptionKey, sealedKeyId } from "../../../server/secrets/sealer.js";

describe("the sealer", () => {
  const key = randomBytes(32);
  const sealer = makeSealer(key);
  const at = "environments.headers/env_1";

  it("opens what it sealed, and seals the same value differently each time", () => {
    const sealed = sealer.seal('{"authorization":"Bearer sk-live-1"}', at);
    expect(sealed).not.toContain("sk-live-1");
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealedKeyId(sealed)).toBe(keyIdOf(key));
    expect(sealer.open(sealed, at)).toBe('{"authorization":"Bearer sk-live-1"}');
    expect(sealer.seal("same", at)).not.toBe(sealer.seal("same", at));
  });

  it("refuses a value moved to another place, altered, or sealed under another key", () => {
    const sealed = sealer.seal("secret", at);
    expect(() => sealer.open(sealed, "environments.headers/env_2")).toThrow(UnsealError);
    const parts = sealed.split(".");
    const flipped = Buffer.from(parts[3]!, "base64url");
    flipped[0]! ^= 1;
    expect(() => sealer.open([...parts.slice(0, 3), flipped.toString("base64url"), parts[4]].join("."), at)).toThrow(
      /altered/,
    );
    const shortTag = [
      ...parts.slice(0, 4),
      Buffer.from(parts[4]!, "base64url").subarray(0, 4).toString("base64url"),
    ].join(".");
    expect(() => sealer.open(shortTag, at)).toThrow(UnsealError);
    const other = makeSealer(randomBytes(32));
    expect(() => other.open(sealed, at)).toThrow(
      new RegExp(`sealed with key ${sealer.keyId}, not this key \\(${other.keyId}\\)`),
    );
    expect(() => sealer.open("plain text", at)).toThrow(/Not a sealed value/);
  });

  it("reads a key written as 32 bytes of base64 or hex, and nothing else", () => {
    expect(parseEncryptionKey(key.toString("base64"))).toEqual(key);
    expect(parseEncryptionKey(`${key.toString("hex")}\n`)).toEqual(key);
    expect(parseEncryptionKey(randomBytes(16).toString("base64"))).toBeUndefined();
    expect(parseEncryptionKey("correct horse battery staple")).toBeUndefined();
    expect(parseEncryptionKey("")).toBeUndefined();
  });
});
