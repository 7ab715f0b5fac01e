import { createHmac, timingSafeEqual } from "node:crypto";
import { ApiError } from "../errors.js";
import type { Keyset } from "../store/index.js";

const invalidCursor = () =>
  new ApiError("INVALID_CURSOR", {
    message: "The cursor is not one this list issued, or was issued for other filters.",
    details: [{ path: "query.cursor", message: "pass next_cursor exactly as returned, with the same filters" }],
  });

/**
 * Opaque, tamper-evident cursors: the keyset position plus the list and filters it belongs to,
 * signed with a secret kept in the database. A cursor is refused on another list or filters.
 */
export function makeCursorCodec(secret: Buffer) {
  const sign = (payload: string) => createHmac("sha256", secret).update(payload).digest().subarray(0, 16);

  return {
    encode(position: Keyset, scope: string): string {
      const payload = Buffer.from(JSON.stringify([position.created_at, position.id, scope])).toString("base64url");
      return `${payload}.${sign(payload).toString("base64url")}`;
    },
    decode(cursor: string, scope: string): Keyset {
      const [payload, signature, extra] = cursor.split(".");
      if (!payload || !signature || extra !== undefined) throw invalidCursor();
      const expected = sign(payload);
      const given = Buffer.from(signature, "base64url");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor();
      const [created_at, id, issuedFor] = JSON.parse(Buffer.from(payload, "base64url").toString()) as [
        string,
        string,
        string,
      ];
      if (issuedFor !== scope) throw invalidCursor();
      return { created_at, id };
    },
  };
}

export type CursorCodec = ReturnType<typeof makeCursorCodec>;
