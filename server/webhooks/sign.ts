import { Webhook } from "standardwebhooks";

/**
 * The Standard Webhooks headers of a body: `webhook-id` (the event's id, the same on every attempt),
 * `webhook-timestamp` (Unix seconds) and `webhook-signature`, one `v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>` per secret that signs now (two while a rotation overlaps), signed with the
 * specification's own library.
 */
export function signedHeaders(
  secrets: readonly string[],
  eventId: string,
  at: Date,
  body: string,
): Record<string, string> {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(eventId, at, body));
  return {
    "webhook-id": eventId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}
