import { z } from "zod";
import { Name, OwningProject, ResourceId, Timestamp, extensible, listOf } from "./common.js";

const parsedUrl = (url: string) => (URL.canParse(url) ? new URL(url) : undefined);
const HttpUrl = z
  .url({ protocol: /^https?$/, error: "must be an http or https URL" })
  .max(2048)
  .refine((url) => !parsedUrl(url)?.username && !parsedUrl(url)?.password, "credentials in the URL are not allowed; use headers")
  .refine((url) => !parsedUrl(url)?.search && !parsedUrl(url)?.hash, "must not have a query or fragment");

const HeaderName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, "not a valid HTTP header name");
const HeaderValue = z.string().max(8192).regex(/^[\t\x20-\x7e\x80-\xff]*$/, "header values may not hold control characters");

export const EndpointProtocol = z.enum(["openai-chat"]).describe("openai-chat: OpenAI-compatible Chat Completions with tools");
export type EndpointProtocol = z.infer<typeof EndpointProtocol>;

export const Endpoint = z.object({
  protocol: extensible(EndpointProtocol),
  base_url: z.string(),
  model: z.string().nullable(),
  readiness_path: z.string().describe("Probed with GET before a run is accepted"),
  header_names: z.array(z.string()).describe("Header values are write-only and never returned"),
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

export const CreateEnvironmentBody = z
  .strictObject({
    project_id: OwningProject,
    name: Name,
    agent_id: ResourceId,
    endpoint: z.strictObject({
      protocol: EndpointProtocol,
      base_url: HttpUrl.describe("Base of the agent's API, e.g. https://agent.internal/v1"),
      model: z.string().min(1).max(200).optional(),
      readiness_path: z
        .string()
        .regex(/^\/[\x21-\x7e]*$/, "must be an absolute path")
        .max(500)
        .optional()
        .describe("Default: the protocol's, /models for openai-chat"),
      headers: z
        .record(HeaderName, HeaderValue)
        .refine((headers) => Object.keys(headers).length <= 50, "at most 50 headers")
        .optional()
        .describe("Sent with every agent call, e.g. Authorization; write-only"),
    }),
  })
  .meta({ id: "CreateEnvironmentBody" });
export type CreateEnvironmentBody = z.infer<typeof CreateEnvironmentBody>;

export const EnvironmentList = listOf(Environment).meta({ id: "EnvironmentList" });
