import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { EgressPolicy } from "./egress.js";

export interface OutboundRequest {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Responses larger than this are cut off with an error. */
  maxResponseBytes?: number;
  /** Abandons the exchange at once when aborted (a worker stopping, or losing its lease). */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  elapsedMs: number;
}

export class OutboundTimeoutError extends Error {
  override name = "OutboundTimeoutError";
}

/**
 * One HTTP exchange with a host outside the service: egress policy applied at connect time,
 * redirects never followed, a hard deadline over the whole exchange.
 */
export function sendOutbound(egress: EgressPolicy, outbound: OutboundRequest): Promise<OutboundResponse> {
  const { url, method = "GET", headers = {}, body, timeoutMs, maxResponseBytes = 10 * 1024 * 1024, signal } = outbound;
  const target = new URL(url);
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
        timeout: timeoutMs,
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
    const deadline = setTimeout(
      () => request.destroy(new OutboundTimeoutError(`No complete answer from ${target.host} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    request.on("timeout", () => request.destroy(new OutboundTimeoutError(`${target.host} went silent for ${timeoutMs} ms`)));
    if (signal) {
      const abort = () => request.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      if (signal.aborted) abort();
      signal.addEventListener("abort", abort, { once: true });
      request.once("close", () => signal.removeEventListener("abort", abort));
    }
    request.on("error", (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    request.end(body);
  });
}
