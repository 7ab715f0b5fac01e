// The webhook sender's thread: signs each delivery and holds its HTTP exchange, so that neither
// costs the API's event loop anything. It knows nothing of the store: the deliverer sends it what
// to send and records what came of it.
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { parentPort, workerData } from "node:worker_threads";
import { coerceError } from "../errors.js";
import { makeEgressPolicy } from "../net/egress.js";
import { sendOutbound } from "../net/http-request.js";
import { signedHeaders } from "./sign.js";
import type { SendRequest, SendResult, SenderThreadData, ToSender } from "./sender.js";

const { allowlist, maxSockets } = workerData as SenderThreadData;
const egress = makeEgressPolicy({ allowlist });
// Connections to receivers are kept open between attempts (the egress policy still checks each new one).
const agents = {
  "http:": new HttpAgent({ keepAlive: true, maxSockets }),
  "https:": new HttpsAgent({ keepAlive: true, maxSockets }),
};
const stopping = new AbortController();

async function send(request: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  try {
    const response = await sendOutbound(egress, {
      url: request.url,
      method: "POST",
      headers: {
        ...signedHeaders(request.secrets, request.eventId, new Date(request.at), request.body),
        "user-agent": "assure-webhooks/1",
      },
      body: request.body,
      timeoutMs: request.timeoutMs,
      maxResponseBytes: 64 * 1024,
      signal: stopping.signal,
      agent: agents[new URL(request.url).protocol as "http:" | "https:"],
    });
    return { id: request.id, status: response.status, error: null, durationMs: elapsed() };
  } catch (error) {
    return { id: request.id, status: null, error: coerceError(error).message, durationMs: elapsed() };
  }
}

parentPort!.on("message", (message: ToSender) => {
  if (message.kind === "stop") {
    stopping.abort(new Error("the service is stopping"));
    agents["http:"].destroy();
    agents["https:"].destroy();
    parentPort!.close();
    return;
  }
  void send(message.request).then((result) => parentPort!.postMessage(result));
});
