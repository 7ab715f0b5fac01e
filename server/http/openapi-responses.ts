import { STATUS_CODES } from "node:http";
import { ERROR_CODES, type ErrorCode } from "../errors.js";
import type { RouteEntry } from "./context.js";

/**
 * What each operation of the OpenAPI document answers besides its successes, said per operation:
 * the statuses it can answer, each with the error envelope and the codes it may carry, and the
 * headers every response sets. The codes come from what any route of its kind can answer (its
 * key, its limits, its input) and from the route's own `config.errors`; the property tests fail
 * on an answer an operation does not document.
 */

type Header = { description: string; schema: Record<string, unknown> };

export const RESPONSE_HEADERS = {
  "X-Request-Id": {
    description: "The request's id, as `error.request_id` says it: quote it when asking about a request",
    schema: { type: "string" },
  },
  "X-RateLimit-Limit": {
    description: "Requests the budget this request spent allows a minute (sent while rate limits are on)",
    schema: { type: "integer" },
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in that budget (sent while rate limits are on)",
    schema: { type: "integer" },
  },
  "X-RateLimit-Reset": {
    description: "When the budget is whole again, in Unix seconds (sent while rate limits are on)",
    schema: { type: "integer" },
  },
  "Retry-After": {
    description: "Seconds to wait before trying again",
    schema: { type: "integer", minimum: 0 },
  },
  Location: {
    description: "The path of the resource the request created (or found)",
    schema: { type: "string" },
  },
  "Idempotent-Replayed": {
    description: "`true` when this answers a replay of an earlier request with the same Idempotency-Key",
    schema: { type: "string", enum: ["true"] },
  },
  Deprecation: {
    description: "When what this operation uses was deprecated (RFC 9745), as `@<Unix seconds>`",
    schema: { type: "string" },
  },
  Sunset: {
    description: "From when it may be removed (RFC 8594), an HTTP date",
    schema: { type: "string" },
  },
} satisfies Record<string, Header>;

type HeaderName = keyof typeof RESPONSE_HEADERS;

/** The tags operations are grouped by, each described once. */
export const TAGS: { name: string; description: string }[] = [
  { name: "projects", description: "Projects: what every other resource belongs to, and the repositories they gate" },
  { name: "agents", description: "The agents under test, by name and version" },
  {
    name: "environments",
    description: "Where an agent is deployed and how it is reached (its protocol, URL, credentials, pace)",
  },
  { name: "auth", description: "Keys for GitHub Actions workflows, from their OIDC tokens" },
  { name: "test-specs", description: "Test specs: scenarios, security probes and gates, versioned by content" },
  { name: "runs", description: "Assurance runs of a spec against an environment, and their evidence in one object" },
  {
    name: "evidence",
    description: "A run's evidence piece by piece: its trace, conversations, evaluations and findings",
  },
  {
    name: "release-decisions",
    description: "Release decisions (ALLOWED, BLOCKED) with their reasons, waivers and policy approvals",
  },
  {
    name: "webhooks",
    description: "Endpoints that receive a project's events, signed per Standard Webhooks, and their deliveries",
  },
  { name: "audit", description: "The audit trail of every write" },
  {
    name: "traces",
    description: "Agents' own OpenTelemetry spans (OTLP/HTTP), attached to the conversations they belong to",
  },
];

/** The codes any route answers, whatever it does: its key, its limits, the store, the host. */
function codesOf(route: RouteEntry, method: string): ErrorCode[] {
  const writes = ["POST", "PUT", "PATCH"].includes(method);
  const { params, querystring, body } = route.reads;
  return [
    ...(params || querystring || body ? (["VALIDATION_FAILED"] as const) : []),
    ...(writes ? (["MALFORMED_BODY", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"] as const) : []),
    ...(route.scope ? (["UNAUTHENTICATED", "INSUFFICIENT_SCOPE"] as const) : []),
    ...(params ? (["NOT_FOUND"] as const) : []),
    ...(querystring && !writes ? (["INVALID_CURSOR"] as const) : []),
    "REQUEST_TIMEOUT",
    "RATE_LIMITED",
    "HEADERS_TOO_LARGE",
    "INTERNAL",
    "STORAGE_UNAVAILABLE",
    ...route.errors,
  ];
}

const headerRefs = (names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** Every response's headers: the request id and, while limits are on, the budget's. */
const ALWAYS: HeaderName[] = ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

/** The error responses of one operation, by status. */
export function errorResponses(route: RouteEntry, method: string, deprecated: boolean): Record<string, unknown> {
  const byStatus = new Map<number, Set<ErrorCode>>();
  for (const code of codesOf(route, method)) {
    const { status } = ERROR_CODES[code];
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code));
  }
  const extra: HeaderName[] = deprecated ? ["Deprecation", "Sunset"] : [];
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, codes]) => {
        const list = [...codes].sort();
        const retryable = list.some((code) => ERROR_CODES[code].retryable);
        return [
          String(status),
          {
            description: `${STATUS_CODES[status]}: ${list.map((code) => `\`${code}\``).join(", ")}`,
            headers: headerRefs([...ALWAYS, ...(retryable ? (["Retry-After"] as const) : []), ...extra]),
            content: {
              "application/json": {
                schema: {
                  allOf: [
                    { $ref: "#/components/schemas/Error" },
                    { properties: { error: { properties: { code: { enum: list } } } } },
                  ],
                },
              },
            },
          },
        ];
      }),
  );
}

/** The headers of one operation's success. */
export function successHeaders(route: RouteEntry, status: string, deprecated: boolean): Record<string, unknown> {
  return headerRefs([
    ...ALWAYS,
    ...(route.location ? (["Location"] as const) : []),
    ...((route.operationId === "createRun" || route.operationId === "uploadRun") && status === "200"
      ? (["Idempotent-Replayed"] as const)
      : []),
    ...(deprecated ? (["Deprecation", "Sunset"] as const) : []),
  ]);
}
