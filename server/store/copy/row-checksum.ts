import { createHash, type Hash } from "node:crypto";

/**
 * One value as both databases' rows are compared: integers as numbers (read as bigint on both
 * sides), reals as numbers, text as a JSON string, BLOBs as base64.
 */
function canonicalValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (value instanceof Uint8Array) return JSON.stringify({ base64: Buffer.from(value).toString("base64") });
  throw new Error(`A value of an unexpected type (${typeof value}) cannot be compared.`);
}

/** A running sha256 over rows in a table's comparison order, and their count. */
export class RowChecksum {
  #hash: Hash = createHash("sha256");
  rows = 0;

  add(row: readonly unknown[]): void {
    this.#hash.update(`[${row.map(canonicalValue).join(",")}]\n`);
    this.rows++;
  }

  digest(): string {
    return `sha256:${this.#hash.digest("hex")}`;
  }
}
