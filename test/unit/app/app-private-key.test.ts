import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";
import { readAppPrivateKey } from "../../../app/github.js";

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const pkcs1 = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const pkcs8 = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const dir = mkdtempSync(join(tmpdir(), "assure-key-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The key read signs what the App's public key verifies: it is the App's key, whatever its form. */
function signsAsTheApp(pem: string): boolean {
  const data = Buffer.from("header.payload");
  return verify("sha256", data, publicKey, sign("sha256", data, createPrivateKey(pem)));
}

describe("the App's private key", () => {
  it.each([
    ["a PEM (PKCS#1)", pkcs1],
    ["a PEM (PKCS#8)", pkcs8],
    ["a PEM with its newlines escaped, as in a .env file", pkcs1.replace(/\n/g, "\\n")],
    ["a PEM in base64, as Probot accepts it", Buffer.from(pkcs1).toString("base64")],
  ])("is read from PRIVATE_KEY given as %s", (_form, value) => {
    expect(signsAsTheApp(readAppPrivateKey({ privateKey: value, privateKeyPath: undefined }))).toBe(true);
  });

  it("is read from the file PRIVATE_KEY_PATH names", () => {
    const path = join(dir, "app.pem");
    writeFileSync(path, pkcs8);
    expect(signsAsTheApp(readAppPrivateKey({ privateKey: undefined, privateKeyPath: path }))).toBe(true);
  });

  it("stops the start with a message naming the setting when it is not a private key", () => {
    expect(() => readAppPrivateKey({ privateKey: "not a key", privateKeyPath: undefined })).toThrow(
      /^PRIVATE_KEY is not the App's private key: /,
    );
    const publicPem = createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString();
    expect(() => readAppPrivateKey({ privateKey: publicPem, privateKeyPath: undefined })).toThrow(
      /^PRIVATE_KEY is not/,
    );
    expect(() => readAppPrivateKey({ privateKey: undefined, privateKeyPath: join(dir, "missing.pem") })).toThrow(
      /^PRIVATE_KEY_PATH is not the App's private key: Private key does not exist/,
    );
  });
});
