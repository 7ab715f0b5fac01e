import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** GitHub caps a webhook's payload at 25 MB: a larger body is not GitHub's. */
export const MAX_DELIVERY_BYTES = 25 * 1024 * 1024;

export type DeliveryBody =
  | { kind: "ok"; body: Buffer }
  | { kind: "too_large" }
  | { kind: "bad_signature" }
  | { kind: "aborted" }
  | { kind: "busy" };

/**
 * What bodies not yet verified may hold, all deliveries together: a body is kept while it streams
 * (its signature is known only at its end), so many slow ones at once must not add up to the heap.
 */
export interface BytesBudget {
  take(bytes: number): boolean;
  give(bytes: number): void;
}

export function makeBytesBudget(limit: number): BytesBudget {
  let held = 0;
  return {
    take(bytes) {
      if (held + bytes > limit) return false;
      held += bytes;
      return true;
    },
    give(bytes) {
      held = Math.max(0, held - bytes);
    },
  };
}

/**
 * Reads a webhook delivery's body before anything trusts it: at most `maxBytes` (a larger one is
 * cut off as it streams, whatever its Content-Length claimed), its HMAC-SHA256 computed as it
 * comes, so that a body whose `X-Hub-Signature-256` does not verify is dropped without ever being
 * joined, decoded or parsed.
 */
export function readDeliveryBody(
  req: IncomingMessage,
  secret: string,
  budget: BytesBudget,
  maxBytes = MAX_DELIVERY_BYTES,
): Promise<DeliveryBody> {
  const signature = /^sha256=([0-9a-f]{64})$/.exec(String(req.headers["x-hub-signature-256"] ?? ""))?.[1];
  const hmac = createHmac("sha256", secret);
  const chunks: Buffer[] = [];
  let size = 0;
  let kept = 0;
  return new Promise((resolve) => {
    const done = (outcome: DeliveryBody) => {
      req.removeAllListeners("data");
      budget.give(kept);
      kept = 0;
      resolve(outcome);
    };
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        req.pause();
        return done({ kind: "too_large" });
      }
      hmac.update(chunk);
      // A body that cannot verify is read to its end for the answer, but not kept.
      if (!signature) return;
      if (!budget.take(chunk.length)) {
        chunks.length = 0;
        req.pause();
        return done({ kind: "busy" });
      }
      kept += chunk.length;
      chunks.push(chunk);
    });
    req.on("error", () => done({ kind: "aborted" }));
    req.on("end", () => {
      if (size > maxBytes) return;
      const computed = hmac.digest();
      if (!signature || !timingSafeEqual(computed, Buffer.from(signature, "hex"))) {
        return done({ kind: "bad_signature" });
      }
      done({ kind: "ok", body: Buffer.concat(chunks, size) });
    });
  });
}
