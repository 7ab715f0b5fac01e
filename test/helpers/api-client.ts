import { expect } from "@jest/globals";

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string | undefined;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with `contentType`. */
  body?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export type ResponseValidator = (method: string, path: string, status: number, body: unknown) => string[];

/**
 * A real HTTP client for the API under test. Every /v1 response is checked against the
 * OpenAPI document, and every error against the envelope and its X-Request-Id.
 */
export function makeApiClient(baseUrl: string, validate: ResponseValidator | undefined, defaultToken?: string) {
  async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const token = "token" in options ? options.token : defaultToken;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | Buffer | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["content-type"] ??= "application/json";
    }
    if (options.contentType) headers["content-type"] = options.contentType;
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: typeof body === "string" || body === undefined ? body : new Uint8Array(body),
    });
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text && response.headers.get("content-type")?.includes("json")) parsed = JSON.parse(text);

    const requestId = response.headers.get("x-request-id");
    const bare = path.split("?")[0]!;
    if (bare.startsWith("/v1/") && method !== "HEAD") {
      expect(requestId).toMatch(/^req_[0-9a-z]{26}$/);
      if (response.status >= 400) {
        expect(parsed).toMatchObject({ error: { request_id: requestId } });
      }
      if (validate && !bare.startsWith("/v1/openapi.json") && !bare.startsWith("/v1/schemas/")) {
        const problems = validate(method, bare, response.status, parsed);
        if (problems.length > 0) {
          throw new Error(
            `${method} ${path} → ${response.status} does not match the OpenAPI document:\n${problems.join("\n")}\n${text}`,
          );
        }
      }
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  return {
    call,
    get: <T = any>(path: string, options?: CallOptions) => call<T>("GET", path, options),
    post: <T = any>(path: string, json: unknown, options: CallOptions = {}) =>
      call<T>("POST", path, { ...options, json }),
    patch: <T = any>(path: string, json: unknown, options: CallOptions = {}) =>
      call<T>("PATCH", path, { ...options, json }),
    delete: <T = any>(path: string, options?: CallOptions) => call<T>("DELETE", path, options),
    withToken: (token: string) => makeApiClient(baseUrl, validate, token),
  };
}

export type ApiClient = ReturnType<typeof makeApiClient>;
