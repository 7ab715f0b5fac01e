import type { ErrorEnvelope } from "../../server/contract/index.js";

/** The service refused a request: its error envelope, status and what was asked. */
export class AssureApiError extends Error {
  override name = "AssureApiError";
  constructor(
    readonly status: number,
    readonly envelope: ErrorEnvelope["error"] | undefined,
    what: string,
  ) {
    const details = envelope?.details
      ?.map((d) => `${d.path}: ${d.message}${d.reason ? ` [${d.reason}]` : ""}`)
      .join("; ");
    super(
      `${what} → ${status} ${envelope?.code ?? ""}: ${envelope?.message ?? "no error envelope"}${details ? ` (${details})` : ""}`,
    );
  }
  get code(): string | undefined {
    return this.envelope?.code;
  }
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The assure API over HTTP, for the Action. An answer the service marks retryable (503 while an
 * agent starts, 429, 500) or a network failure is tried again, after `Retry-After` when the
 * service gives one, else with exponential backoff, until `deadline`.
 */
export function makeAssureClient(
  apiUrl: string,
  { token, deadline, log }: { token?: string; deadline: number; log: (line: string) => void },
) {
  async function request<T>(
    method: string,
    path: string,
    { body, headers = {} }: RequestOptions = {},
  ): Promise<{ status: number; body: T }> {
    const what = `${method} ${path.split("?")[0]}`;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${apiUrl}${path}`, {
          method,
          headers: {
            accept: "application/json",
            "user-agent": "assure-action",
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...headers,
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (error) {
        const wait = Math.min(30_000, 1000 * 2 ** (attempt - 1));
        if (Date.now() + wait >= deadline) {
          throw new Error(`${what} failed: ${(error as Error).message}`, { cause: error });
        }
        log(`${what} failed (${(error as Error).message}); trying again in ${Math.round(wait / 1000)} s`);
        await sleep(wait);
        continue;
      }
      const text = await response.text();
      const parsed = text ? (JSON.parse(text) as unknown) : undefined;
      if (response.ok) return { status: response.status, body: parsed as T };
      const envelope = (parsed as ErrorEnvelope | undefined)?.error;
      const error = new AssureApiError(response.status, envelope, what);
      const retryAfter = Number(response.headers.get("retry-after"));
      const wait =
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : Math.min(30_000, 1000 * 2 ** (attempt - 1));
      if (!envelope?.retryable || Date.now() + wait >= deadline) throw error;
      log(`${error.message}; trying again in ${Math.round(wait / 1000)} s`);
      await sleep(wait);
    }
  }
  return {
    get: <T>(path: string) => request<T>("GET", path),
    post: <T>(path: string, body: unknown, headers?: Record<string, string>) =>
      request<T>("POST", path, { body, ...(headers ? { headers } : {}) }),
  };
}

export type AssureClient = ReturnType<typeof makeAssureClient>;
