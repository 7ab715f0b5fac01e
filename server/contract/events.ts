import { z } from "zod";
import { EvaluationKind, EvaluationStatus } from "./evidence.js";
import { FailureCause, RunFailure, RunStatus, Verdict } from "./runs.js";
import { ProbeCategory, Severity } from "../specs/document.js";
import { RecordedJson, RecordedJsonObject } from "../specs/primitives.js";
import { TokenUsage } from "./common.js";

/**
 * Every event type a run records, and its `data`: one table for the engine that writes them and
 * for every reader (evaluation, transcripts, the trace's read models). The v1 envelope (`RunEvent`)
 * carries any type, so consumers must ignore types they do not know: new types are additive.
 */

const InConversation = { conversation_id: z.string() };
const InTurn = {
  ...InConversation,
  turn: z.number().int().describe("0 for the system prompt, then 1, 2, … per user turn"),
};
const AtStep = { ...InTurn, step: z.number().int().describe("Agent call within the turn, from 1") };

const AgentFailure = z.object({
  ...AtStep,
  cause: FailureCause,
  message: z.string(),
  http_status: z.number().int().optional(),
  response_body: z.string().optional(),
});

/** One part of an artifact: text, structured data, or a file (by URL, or its bytes when small). */
const ArtifactPart = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("text"), text: z.string(), media_type: z.string().optional() }),
  z.object({ kind: z.literal("data"), data: RecordedJson, media_type: z.string().optional() }),
  z.object({
    kind: z.literal("file"),
    url: z.string().optional(),
    bytes_base64: z.string().optional().describe("The file's bytes, when they are at most 64 KiB"),
    size_bytes: z.number().int().optional(),
    media_type: z.string().optional(),
    filename: z.string().optional(),
  }),
]);

/** An output the agent produced besides its message (an A2A task's artifact). */
export const AgentArtifact = z.object({
  artifact_id: z.string(),
  name: z.string().optional(),
  description: z.string().optional(),
  parts: z.array(ArtifactPart),
  metadata: RecordedJsonObject.optional(),
});
export type AgentArtifact = z.infer<typeof AgentArtifact>;

export const RUN_EVENT_DATA = {
  "run.status_changed": z.object({ from: RunStatus, to: RunStatus, verdict: Verdict, failure: RunFailure.optional() }),
  "run.resumed": z.object({
    attempt: z.number().int(),
    interrupted_conversations: z.number().int(),
    reason: z.string().nullable(),
  }),
  "conversation.started": z.object({
    ...InConversation,
    kind: z.enum(["scenario", "probe"]),
    scenario_id: z.string(),
    repeat_index: z.number().int(),
    attempt: z.number().int(),
    retry: z
      .number()
      .int()
      .optional()
      .describe("Set on a try again of a case whose checks failed (defaults.retry_failed): 1 for the first"),
    tools_run_by: z
      .enum(["assure", "agent"])
      .optional()
      .describe(
        "Who runs the tools the agent calls: assure, from the spec's mocks, or the agent itself (http, a2a), whose calls are known only as it reports them; absent on earlier runs (assure)",
      ),
    trace_id: z
      .string()
      .optional()
      .describe(
        "The W3C trace id sent (in traceparent) with every call of this conversation to an agent that runs its own tools: its OTLP spans with this id are the conversation's trace",
      ),
  }),
  "conversation.completed": z.object(InConversation),
  "trace.received": z
    .object({
      ...InConversation,
      spans: z
        .number()
        .int()
        .describe("Spans of the conversation's trace the agent exported (OTLP), each counted once"),
      tool_calls: z.number().int().describe("Tool calls read from them, recorded as tool.called with source trace"),
    })
    .describe("The agent's own trace of a conversation arrived: what it tells counts as evidence of the tools it ran"),
  "conversation.failed": z.object({ ...InConversation, cause: FailureCause }),
  "message.sent": z.object({ ...InTurn, role: z.enum(["system", "user"]), content: z.string() }),
  "message.received": z.object({
    ...AtStep,
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(z.object({ call_id: z.string(), name: z.string() })),
    finish_reason: z.string().nullable(),
    latency_ms: z.number(),
    attempts: z.number().int(),
    model: z.string().nullable().optional().describe("The model the answer names: what it costs is priced by it"),
    usage: TokenUsage.nullable()
      .optional()
      .describe("The tokens the agent reported for this answer; null when it reported none (unknown, not zero)"),
    artifacts: z
      .array(AgentArtifact)
      .optional()
      .describe(
        "Outputs the agent produced with this answer (an A2A task's artifacts), each recorded once: when it first appears or changes",
      ),
  }),
  "tool.called": z.object({
    ...AtStep,
    call_id: z.string(),
    name: z.string(),
    arguments: RecordedJsonObject.describe("Parsed; {} when arguments_raw is not a JSON object"),
    arguments_raw: z.string().describe("Exactly what the agent sent"),
    arguments_error: z.string().optional(),
    executed_by: z
      .enum(["assure", "agent"])
      .optional()
      .describe(
        "Who ran the tool: assure, from the spec's mocks, or the agent itself; absent on earlier runs (assure)",
      ),
    source: z
      .object({ kind: z.enum(["mock", "mcp", "trace", "reply"]) })
      .optional()
      .describe(
        "Where assure learnt of the call: a function call it answered from mocks (mock), a call to its MCP server (mcp), the agent's traces (trace), or the agent's answer (reply); absent on earlier runs (mock)",
      ),
  }),
  "tools.listed": z
    .object({
      ...AtStep,
      tools: z.array(z.string()).describe("The tools it was given: the spec's, answered from their mocks"),
      source: z.object({ kind: z.enum(["mcp"]) }),
    })
    .describe(
      "The agent listed the conversation's mocked tools over its MCP server: the tools it calls there are recorded, so a tool it did not call there was not called",
    ),
  "tool.returned": z.object({
    ...AtStep,
    call_id: z.string(),
    name: z.string(),
    result: RecordedJson.describe("The tool result handed back to the agent"),
    source: z.object({
      kind: z.enum(["when", "default", "no_mock", "unknown_tool", "invalid_arguments", "agent"]),
      index: z.number().int().optional(),
    }),
    injected: z.boolean(),
  }),
  "agent.throttled": z
    .object({
      ...AtStep,
      http_status: z.number().int().describe("429 or 503"),
      retry_after_ms: z
        .number()
        .int()
        .describe("How long the agent asked to wait (Retry-After); the call is sent again after it"),
    })
    .describe("The agent asked to wait; not a failure"),
  "agent.call_failed": AgentFailure,
  "agent.response_invalid": AgentFailure,
  "turn.step_limit_reached": z.object({ ...InTurn, max_steps: z.number().int() }),
  "evaluation.completed": z.object({
    evaluation_id: z.string(),
    kind: EvaluationKind,
    metric_id: z.string(),
    status: EvaluationStatus,
    score: z.number(),
  }),
  "finding.raised": z.object({
    finding_id: z.string(),
    probe_id: z.string(),
    category: ProbeCategory,
    severity: Severity,
  }),
};

export type RunEventType = keyof typeof RUN_EVENT_DATA;
export const RUN_EVENT_TYPES = Object.keys(RUN_EVENT_DATA) as RunEventType[];
export type RunEventData<T extends RunEventType> = z.infer<(typeof RUN_EVENT_DATA)[T]>;

/** An event's type and data, told apart by type. */
export type TypedEvent = { [T in RunEventType]: { type: T; data: RunEventData<T> } }[RunEventType];

/** The event types and their data as one JSON Schema (served at /v1/schemas/events.json). */
export const TypedRunEvent = z
  .discriminatedUnion(
    "type",
    RUN_EVENT_TYPES.map((type) => z.object({ type: z.literal(type), data: RUN_EVENT_DATA[type] })) as unknown as [
      z.ZodObject<{ type: z.ZodLiteral<string>; data: z.ZodType }>,
    ],
  )
  .meta({ title: "assure run events", description: "The type and data of every event a run records (envelope v1)." });
