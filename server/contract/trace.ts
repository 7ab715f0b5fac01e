import { z } from "zod";
import { PageCursor, Timestamp, listOf } from "./common.js";
import { RUN_EVENT_DATA, RUN_EVENT_TYPES } from "./events.js";
import { oneOfBy } from "./one-of.js";
import { typedEnvelope } from "./typed-events.js";
import { RecordedJson, RecordedJsonObject } from "../specs/primitives.js";

/** The versioned event envelope (spec §2.3): the trace entries of a run, and what webhooks deliver. */
export const RunEventEnvelope = z.object({
  schema_version: z.literal("1"),
  event_id: z.string().describe("Unique per event: deduplicate on it"),
  run_id: z.string(),
  sequence: z.number().int().describe("Gap-free from 1 within a run"),
  type: z
    .string()
    .describe(
      `One of ${RUN_EVENT_TYPES.join(", ")}; more may be added: ignore types you do not know. Each type's data: /v1/schemas/events.json`,
    ),
  occurred_at: Timestamp,
  data: z.record(z.string(), z.unknown()),
});
export type RunEvent = z.infer<typeof RunEventEnvelope>;

/** The envelope as the document gives it, with one schema per type told apart by `type`. */
export const RunEvent = typedEnvelope(
  "RunEvent",
  RunEventEnvelope,
  RUN_EVENT_DATA,
  `A run's event: one of ${RUN_EVENT_TYPES.join(", ")}; more may be added.`,
);

export const RunEventList = listOf(RunEvent).meta({ id: "RunEventList" });

/** `cursor` or `after`, not both: a rule between parameters, checked by the route (INVALID_PARAMETER_COMBINATION). */
export const TraceQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: PageCursor.optional(),
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Return entries with a sequence greater than this; not with cursor"),
});

export const ConversationSummary = z
  .object({
    conversation_id: z.string(),
    run_id: z.string(),
    kind: z.enum(["scenario", "probe"]),
    scenario_id: z.string().describe("The scenario's (or security probe's) id in the spec"),
    repeat_index: z.number().int().describe("1-based repeat of the scenario"),
    attempt: z.number().int().describe("More than 1 when an earlier attempt was interrupted"),
    retry: z
      .number()
      .int()
      .describe(
        "0 for the first try of its scenario and repeat; k for the k-th try again after its checks failed (defaults.retry_failed)",
      ),
    counted: z
      .boolean()
      .describe(
        "Whether the evaluations use it: the last completed try of its scenario and repeat; earlier tries stay as evidence",
      ),
    status: z.enum(["running", "completed", "interrupted", "failed"]),
    created_at: Timestamp,
    ended_at: Timestamp.nullable(),
    links: z.object({ self: z.string() }),
  })
  .meta({ id: "ConversationSummary" });

const ToolCallRef = z.object({ call_id: z.string(), name: z.string() });

/** A message of a conversation: what it holds depends on who sent it (its `role`). */
export const ConversationMessage = oneOfBy(
  z.object({
    sequence: z.number().int(),
    turn: z.number().int().describe("0 for the system prompt"),
    role: z.enum(["system", "user", "assistant", "tool"]),
    content: z.unknown(),
    tool_calls: z.array(ToolCallRef).optional(),
    tool_call_id: z.string().optional(),
    name: z.string().optional(),
    ref: z.string().describe("The trace entry"),
  }),
  {
    id: "ConversationMessage",
    description: "A message of the conversation; its content depends on its role",
    propertyName: "role",
  },
  [
    {
      id: "PromptMessage",
      values: ["system", "user"],
      schema: z.object({ role: z.enum(["system", "user"]), content: z.string() }),
      description: "The system prompt (turn 0) or a user turn, as sent to the agent",
    },
    {
      id: "AssistantMessage",
      values: ["assistant"],
      schema: z.object({
        role: z.literal("assistant"),
        content: z.string().nullable().describe("The agent's text; null when it only called tools"),
        tool_calls: z.array(ToolCallRef).describe("The tools it called in this answer, in order"),
      }),
      description: "An answer of the agent",
    },
    {
      id: "ToolMessage",
      values: ["tool"],
      schema: z.object({
        role: z.literal("tool"),
        content: RecordedJson.describe("The tool's result, as handed back to the agent"),
        tool_call_id: z.string(),
        name: z.string().describe("The tool's name"),
      }),
      description: "A tool's result",
    },
  ],
);

export const Conversation = ConversationSummary.extend({
  turns: z.array(z.object({ turn: z.number().int(), ref: z.string() })),
  messages: z.array(ConversationMessage),
}).meta({ id: "Conversation" });

export const ConversationList = listOf(ConversationSummary).meta({ id: "ConversationList" });

export const Turn = z
  .object({
    conversation_id: z.string(),
    turn: z.number().int(),
    user: z.string().nullable(),
    reply: z.string().nullable().describe("The agent's last text of the turn"),
    steps: z.array(
      z.object({
        step: z.number().int(),
        content: z.string().nullable(),
        latency_ms: z.number().nullable(),
        ref: z.string(),
        tool_calls: z.array(
          z.object({
            call_id: z.string(),
            name: z.string(),
            arguments: RecordedJsonObject.describe("Parsed; {} when arguments_raw is not a JSON object"),
            arguments_raw: z.string(),
            arguments_error: z.string().optional(),
            result: RecordedJson.describe("What the tool returned; null until it did"),
            ref: z.string(),
          }),
        ),
      }),
    ),
    events: z.array(z.string()).describe("Every trace entry of the turn"),
  })
  .meta({ id: "Turn" });
export type Turn = z.infer<typeof Turn>;
