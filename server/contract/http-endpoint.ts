import { compile } from "@jmespath-community/jmespath";
import { z } from "zod";

/**
 * How an `http` environment's agent is called and read: a request template with placeholders,
 * and JMESPath expressions over its answer. JMESPath because it is a specified language with a
 * compliance suite, and runs no code.
 */

/** What a placeholder in the request template stands for, each turn. */
export const REQUEST_PLACEHOLDERS = [
  "message",
  "messages",
  "conversation_id",
  "session_id",
  "turn",
  "mcp_url",
] as const;
export type RequestPlaceholder = (typeof REQUEST_PLACEHOLDERS)[number];

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The names of the `{{name}}` placeholders in a text. */
export const placeholdersIn = (text: string): string[] => [...text.matchAll(PLACEHOLDER)].map((match) => match[1]!);

const PLACEHOLDER_LIST = REQUEST_PLACEHOLDERS.map((name) => `{{${name}}}`).join(", ");

/** The strings of a JSON value, keys and values, where placeholders may be. */
function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into);
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      into.push(key);
      stringsOf(item, into);
    }
  }
  return into;
}

function checkPlaceholders(texts: string[], ctx: z.RefinementCtx) {
  for (const text of texts) {
    const unknown = placeholdersIn(text).find((name) => !(REQUEST_PLACEHOLDERS as readonly string[]).includes(name));
    if (unknown) {
      ctx.addIssue({ code: "custom", message: `unknown placeholder {{${unknown}}}: use ${PLACEHOLDER_LIST}` });
      return;
    }
  }
}

/** Why a JMESPath expression does not compile, or undefined. */
function jmespathProblem(expression: string): string | undefined {
  try {
    compile(expression);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message.split("\n")[0] : String(error);
  }
}

/** The document names the format (`jmespath`): a validator that knows it can check it as the service does. */
const JmesPath = z
  .string()
  .min(1)
  .max(2000)
  .superRefine((expression, ctx) => {
    const problem = jmespathProblem(expression);
    if (problem) ctx.addIssue({ code: "custom", message: `not a JMESPath expression: ${problem}` });
  })
  .meta({ format: "jmespath" });

export const HttpRequestTemplate = z
  .strictObject({
    method: z.enum(["POST", "PUT", "PATCH", "GET"]).default("POST"),
    path: z
      .string()
      .max(2000)
      .regex(/^(\/[\x21-\x7e]*)?$/, "must be an absolute path, e.g. /chat")
      .default("")
      .describe(
        `Appended to base_url (empty: base_url itself); placeholders in it are URL-encoded. A {{name}} other than ${PLACEHOLDER_LIST} is refused`,
      ),
    body: z
      .unknown()
      .optional()
      .describe(
        `Any JSON value, sent as the request body (not with GET). Placeholders: ${PLACEHOLDER_LIST}. A string that is exactly one placeholder takes the value with its JSON type; inside longer text the value is written in. {{mcp_url}} is the conversation's MCP server (the spec's tools answered from its mocks), valid while the conversation lives; a run needs the service's public base URL (ASSURE_BASE_URL) for it`,
      ),
    mcp_url_header: z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "must be an HTTP header name")
      .optional()
      .describe(
        "A header that carries the conversation's MCP server URL (the spec's tools answered from its mocks) on every request, e.g. x-mcp-url; a run needs the service's public base URL (ASSURE_BASE_URL) for it",
      ),
  })
  .superRefine((request, ctx) => {
    checkPlaceholders([request.path, ...stringsOf(request.body)], ctx);
    if (request.method === "GET" && request.body !== undefined) {
      ctx.addIssue({ code: "custom", path: ["body"], message: "a GET request has no body" });
    }
  })
  // A GET request has no body.
  .meta({
    id: "HttpRequestTemplate",
    anyOf: [{ properties: { method: { enum: ["POST", "PUT", "PATCH"] } } }, { properties: { body: false } }],
  });
export type HttpRequestTemplate = z.infer<typeof HttpRequestTemplate>;

export const HttpResponseMapping = z
  .strictObject({
    text: JmesPath.describe("The agent's reply text, e.g. reply"),
    session_id: JmesPath.optional().describe("Read after each turn and sent back as {{session_id}}, e.g. session"),
    tool_calls: JmesPath.optional().describe(
      "The tools the agent ran, as a list of {name, arguments} (and optionally id, result), e.g. steps[?type=='tool'].{name: tool, arguments: args}",
    ),
    stream: z
      .enum(["sse"])
      .optional()
      .describe("sse: the answer is server-sent events; each event's data is read, and their texts joined"),
  })
  .meta({ id: "HttpResponseMapping" });
export type HttpResponseMapping = z.infer<typeof HttpResponseMapping>;

/** An `http` environment's request and response, as stored. */
export interface HttpEndpoint {
  request: HttpRequestTemplate;
  response: HttpResponseMapping;
}
