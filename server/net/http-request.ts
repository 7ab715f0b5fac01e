import { request as httpRequest, type Agent, type ClientRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import type { EgressPolicy } from "./egress.js";

export interface OutboundRequest {
  /** A caller that calls the same URL again and again passes it parsed, once. */
  url: string | URL;
  method?: "GET" | "POST" | "PUT" | "PATCH";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Responses larger than this are cut off with an error. */
  maxResponseBytes?: number;
  /** Abandons the exchange at once when aborted (a worker stopping, or losing its lease). */
  signal?: AbortSignal;
  /** Keeps connections open between exchanges (a caller that sends one host many requests). */
  agent?: Agent;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  elapsedMs: number;
}

export class OutboundTimeoutError extends Error {
  override name = "OutboundTimeoutError";
}

/**
 * The exchanges in flight per abort signal: one listener per signal (a job's), however many
 * calls it makes, ends them all when it fires.
 */
const inFlight = new WeakMap<AbortSignal, Set<ClientRequest>>();

function abortWith(signal: AbortSignal, request: ClientRequest): void {
  if (signal.aborted) {
    request.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    return;
  }
  let requests = inFlight.get(signal);
  if (!requests) {
    const mine = new Set<ClientRequest>();
    requests = mine;
    inFlight.set(signal, mine);
    signal.addEventListener(
      "abort",
      () => {
        for (const pending of mine) {
          pending.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
        }
      },
      { once: true },
    );
  }
  requests.add(request);
  request.once("close", () => requests.delete(request));
}

/**
 * One HTTP exchange with a host outside the service: egress policy applied at connect time,
 * redirects never followed, a hard deadline over the whole exchange.
 */
export function sendOutbound(egress: EgressPolicy, outbound: OutboundRequest): Promise<OutboundResponse> {
  const {
    url,
    method = "GET",
    headers = {},
    body,
    timeoutMs,
    maxResponseBytes = 10 * 1024 * 1024,
    signal,
    agent,
  } = outbound;
  const target = typeof url === "string" ? new URL(url) : url;
  const denied = egress.checkHost(target.hostname);
  if (denied) return Promise.reject(new Error(`Egress refused: ${denied}`));
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  const started = performance.now();

  return new Promise((resolve, reject) => {
    const request = send(
      target,
      {
        method,
        headers: { accept: "application/json", ...headers, ...(body ? { "content-type": "application/json" } : {}) },
        lookup: egress.lookup,
        ...(agent ? { agent } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) {
            request.destroy(new Error(`Response from ${target.host} exceeds ${maxResponseBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () => {
          clearTimeout(deadline);
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
            elapsedMs: performance.now() - started,
          });
        });
        response.on("error", reject);
      },
    );
    // One deadline over the whole exchange (connecting, silence and slow bodies alike).
    const deadline = setTimeout(
      () => request.destroy(new OutboundTimeoutError(`No complete answer from ${target.host} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    if (signal) abortWith(signal, request);
    request.on("error", (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    request.end(body);
  });
}
