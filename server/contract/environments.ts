import { z } from "zod";
import { Name, OwningProject, ResourceId, Timestamp, extensible, listOf } from "./common.js";
import {
  SAMPLE_TEMPLATE_VALUES,
  URL_TEMPLATE_FIELDS,
  compileUrlPattern,
  fillUrlTemplate,
  placeholdersOf,
} from "./agent-urls.js";
import { HttpRequestTemplate, HttpResponseMapping } from "./http-endpoint.js";
import { URL_GLOB_PATTERN, URL_TEMPLATE_PATTERN } from "./url-syntax.js";

const parsedUrl = (url: string) => (URL.canParse(url) ? new URL(url) : undefined);
const HttpUrl = z
  .url({ protocol: /^https?$/, error: "must be an http or https URL" })
  .max(2048)
  .refine(
    (url) => !parsedUrl(url)?.username && !parsedUrl(url)?.password,
    "credentials in the URL are not allowed; use headers",
  )
  .refine((url) => !parsedUrl(url)?.search && !parsedUrl(url)?.hash, "must not have a query or fragment");

const TEMPLATE_FIELD_LIST = URL_TEMPLATE_FIELDS.map((field) => `{${field}}`).join(", ");

/** A base URL, or a template of one filled from a run's source; checked as a URL with sample values. */
const AgentUrlTemplate = z
  .string()
  .max(2048)
  .superRefine((template, ctx) => {
    const unknown = placeholdersOf(template).filter(
      (name) => !(URL_TEMPLATE_FIELDS as readonly string[]).includes(name),
    );
    if (unknown.length > 0) {
      ctx.addIssue({ code: "custom", message: `unknown placeholder {${unknown[0]}}: use ${TEMPLATE_FIELD_LIST}` });
      return;
    }
    const filled = fillUrlTemplate(template, SAMPLE_TEMPLATE_VALUES);
    const checked = HttpUrl.safeParse("url" in filled ? filled.url : template);
    for (const issue of checked.error?.issues ?? []) ctx.addIssue({ code: "custom", message: issue.message });
  })
  .meta({ pattern: URL_TEMPLATE_PATTERN });

const UrlPattern = z
  .string()
  .max(2048)
  .refine(
    (pattern) => compileUrlPattern(pattern) !== undefined,
    "must be an http or https URL, without credentials, query or fragment; * matches one host label or one path segment",
  )
  .meta({ pattern: URL_GLOB_PATTERN })
  .describe(
    "Other URLs the agent may be reached at (a deployment's, one a run names): scheme and port exact, * matches one DNS label or path segment, e.g. https://pr-*.preview.acme.dev/v1",
  );

const HeaderName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, "not a valid HTTP header name");
const HeaderValue = z
  .string()
  .max(8192)
  .regex(/^[\t\x20-\x7e\x80-\xff]*$/, "header values may not hold control characters");

export const EndpointProtocol = z
  .enum(["openai-chat", "openai-responses", "anthropic-messages", "http", "a2a"])
  .describe(
    "openai-chat: OpenAI-compatible Chat Completions with tools (POST {base_url}/chat/completions); openai-responses: OpenAI's Responses API (POST {base_url}/responses); anthropic-messages: Anthropic's Messages API (POST {base_url}/v1/messages); in these three the agent's function tools are answered from the spec's mocks. http: any JSON API, called as the endpoint's request says and read as its response says; a2a: Agent2Agent (1.0, or 0.3), its card at {base_url}/.well-known/agent-card.json; with these two the agent runs its own tools",
  );
export type EndpointProtocol = z.infer<typeof EndpointProtocol>;

/** What a model's tokens cost, in US dollars per million. */
export const ModelPrice = z
  .strictObject({
    input_usd_per_million_tokens: z.number().min(0).max(100_000),
    output_usd_per_million_tokens: z.number().min(0).max(100_000),
  })
  .meta({ id: "ModelPrice" });
export type ModelPrice = z.infer<typeof ModelPrice>;

/** Prices by model name; `*` prices any model not named. */
export const Pricing = z
  .record(z.string().min(1).max(200), ModelPrice)
  .refine((pricing) => Object.keys(pricing).length <= 100, "at most 100 models")
  .meta({ maxProperties: 100 })
  .describe(
    'Prices by the model an answer names (or the endpoint\'s model when it names none); "*" prices any other model. A run keeps the prices it started with',
  );
export type Pricing = z.infer<typeof Pricing>;

export const Endpoint = z.object({
  protocol: extensible(EndpointProtocol),
  base_url: z.string().describe(`May hold ${TEMPLATE_FIELD_LIST}, filled from a run's source`),
  url_pattern: z.string().nullable().describe("Other URLs the agent may be reached at; null: only base_url"),
  model: z.string().nullable(),
  readiness_path: z.string().describe("Probed with GET before a run is accepted"),
  max_concurrency: z
    .number()
    .int()
    .describe("Calls in flight to the agent at most, across every run against this environment"),
  rate_limit_per_minute: z
    .number()
    .int()
    .nullable()
    .describe("Calls per minute at most, evenly spaced; null: no limit"),
  trace_wait_ms: z
    .number()
    .int()
    .nullable()
    .describe(
      "How long, in ms, a conversation with an agent that runs its own tools waits for its late OTLP spans after its last answer; null: 5000",
    ),
  header_names: z.array(z.string()).describe("Header values are write-only and never returned"),
  pricing: Pricing,
  request: HttpRequestTemplate.nullable().describe("How an http agent is called; null for the other protocols"),
  response: HttpResponseMapping.nullable().describe("How an http agent's answer is read; null for the other protocols"),
});

export const Environment = z
  .object({
    environment_id: z.string(),
    project_id: z.string(),
    name: z.string(),
    agent_id: z.string(),
    endpoint: Endpoint,
    created_at: Timestamp,
  })
  .meta({ id: "Environment" });
export type Environment = z.infer<typeof Environment>;

/** What a request may set on an endpoint, each field as it is checked. */
const EndpointFields = {
  base_url: AgentUrlTemplate.describe(
    `Base of the agent's API, e.g. https://agent.internal/v1; may hold ${TEMPLATE_FIELD_LIST}, e.g. https://pr-{pull_request}.preview.acme.dev/v1`,
  ),
  url_pattern: UrlPattern,
  model: z.string().min(1).max(200),
  readiness_path: z
    .string()
    .regex(/^\/[\x21-\x7e]*$/, "must be an absolute path")
    .max(500)
    .describe(
      "Default: the protocol's: /models for openai-chat and openai-responses, /v1/models for anthropic-messages, /.well-known/agent-card.json for a2a",
    ),
  max_concurrency: z
    .number()
    .int()
    .min(1)
    .max(256)
    .describe(
      "Calls in flight to the agent at most, across every run against this environment (default 16); lowered for a while when the agent answers 429",
    ),
  rate_limit_per_minute: z.number().int().min(1).max(600_000).describe("Calls per minute at most, evenly spaced"),
  trace_wait_ms: z
    .number()
    .int()
    .min(0)
    .max(60_000)
    .describe(
      "For agents that run their own tools (http, a2a): how long, in ms, to wait for their OpenTelemetry spans after a conversation's last answer (default 5000); the wait ends sooner once spans stop arriving",
    ),
  headers: z
    .record(HeaderName, HeaderValue)
    .refine((headers) => Object.keys(headers).length <= 50, "at most 50 headers")
    .meta({ maxProperties: 50 })
    .describe("Sent with every agent call, e.g. Authorization, and only to the environment's own URLs; write-only"),
};

export const CreateEnvironmentBody = z
  .strictObject({
    project_id: OwningProject,
    name: Name,
    agent_id: ResourceId,
    endpoint: z
      .strictObject({
        protocol: EndpointProtocol,
        base_url: EndpointFields.base_url,
        url_pattern: EndpointFields.url_pattern.optional(),
        model: EndpointFields.model.optional(),
        readiness_path: EndpointFields.readiness_path.optional(),
        max_concurrency: EndpointFields.max_concurrency.optional(),
        rate_limit_per_minute: EndpointFields.rate_limit_per_minute.optional(),
        trace_wait_ms: EndpointFields.trace_wait_ms.optional(),
        headers: EndpointFields.headers.optional(),
        pricing: Pricing.optional(),
        request: HttpRequestTemplate.optional().describe(
          "With protocol http: how the agent is called (default: POST base_url with no body)",
        ),
        response: HttpResponseMapping.optional().describe(
          "With protocol http, required: how the agent's answer is read",
        ),
      })
      .meta({
        // The two shapes the checks below allow: http with its response mapping, or another protocol without either.
        oneOf: [
          { properties: { protocol: { const: "http" } }, required: ["protocol", "response"] },
          {
            required: ["protocol"],
            properties: {
              protocol: { enum: EndpointProtocol.options.filter((protocol) => protocol !== "http") },
              request: false,
              response: false,
            },
          },
        ],
      })
      .superRefine((endpoint, ctx) => {
        if (endpoint.protocol === "http" && !endpoint.response) {
          ctx.addIssue({
            code: "custom",
            path: ["response"],
            message: "protocol http needs a response mapping (its text at least)",
          });
        }
        for (const field of ["request", "response"] as const) {
          if (endpoint.protocol !== "http" && endpoint[field] !== undefined) {
            ctx.addIssue({ code: "custom", path: [field], message: `only protocol http takes a ${field}` });
          }
        }
      }),
  })
  .meta({ id: "CreateEnvironmentBody" });
export type CreateEnvironmentBody = z.infer<typeof CreateEnvironmentBody>;

export const UpdateEnvironmentBody = z
  .strictObject({
    endpoint: z
      .strictObject({
        base_url: EndpointFields.base_url.optional(),
        url_pattern: EndpointFields.url_pattern.nullable().optional().describe("null removes it"),
        model: EndpointFields.model.nullable().optional().describe("null removes it"),
        readiness_path: EndpointFields.readiness_path.optional(),
        max_concurrency: EndpointFields.max_concurrency.optional(),
        rate_limit_per_minute: EndpointFields.rate_limit_per_minute.nullable().optional().describe("null removes it"),
        trace_wait_ms: EndpointFields.trace_wait_ms.nullable().optional().describe("null: the default"),
        headers: EndpointFields.headers.optional().describe("Replaces every header; write-only"),
        pricing: Pricing.optional().describe("Replaces every price"),
        request: HttpRequestTemplate.optional().describe("protocol http only: replaces the request template"),
        response: HttpResponseMapping.optional().describe("protocol http only: replaces the response mapping"),
      })
      .refine((endpoint) => Object.keys(endpoint).length > 0, "name at least one field to change")
      .meta({ minProperties: 1 }),
  })
  .meta({ id: "UpdateEnvironmentBody" });
export type UpdateEnvironmentBody = z.infer<typeof UpdateEnvironmentBody>;

export const EnvironmentList = listOf(Environment).meta({ id: "EnvironmentList" });
