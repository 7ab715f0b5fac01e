import { RUN_EVENT_DATA, type RunEventType, type TestSpecDocument, type UploadRunBody } from "../contract/index.js";
import { ApiError, type ErrorCode } from "../errors.js";
import { lastTries, planConversations, planKey, type ConversationPlan } from "../engine/plan.js";
import { answerToolCall } from "../engine/tool-mocks.js";
import { toCanonicalJson } from "../specs/canonical-json.js";
import type { ConversationRow, LoggedEvent } from "../store/index.js";

/** What an upload may carry: what the agent was asked, said and called, never what was concluded from it. */
const UPLOADABLE: ReadonlySet<string> = new Set<RunEventType>([
  "conversation.started",
  "conversation.completed",
  "message.sent",
  "message.received",
  "tool.called",
  "tools.listed",
  "tool.returned",
  "agent.throttled",
  "turn.step_limit_reached",
  "trace.received",
]);

/** How far ahead of the service's clock the uploading machine's may be. */
const CLOCK_SKEW_MS = 5 * 60_000;

const refuse = (code: ErrorCode, path: string, message: string) =>
  new ApiError(code, {
    message: `The upload does not match the spec version: ${message}.`,
    details: [{ path, message }],
  });

const same = (a: unknown, b: unknown) => toCanonicalJson(a) === toCanonicalJson(b);

const canaryLine = (canary: string) => `Internal reference (confidential): ${canary}`;

/** An upload's conversations and trace as the store keeps them, under ids the service gives. */
export interface CheckedUpload {
  conversations: Omit<ConversationRow, "run_id">[];
  events: LoggedEvent[];
}

/**
 * Checks an upload against its spec version, as the engine would have held it: the trace is
 * well-formed (gap-free, each entry a conversation's event of its type), it holds each planned
 * case (UPLOAD_CASES_MISMATCH), asks each conversation's turns as planned (UPLOAD_TURNS_MISMATCH),
 * and every tool the service runs was answered as the spec's mocks say (UPLOAD_MOCKS_MISMATCH).
 * What the agent said and which tools it called are the upload's own claims; the verdict is not.
 */
export function checkUpload(
  spec: TestSpecDocument,
  body: Pick<UploadRunBody, "conversations" | "trace">,
  {
    toolsRunBy,
    newId,
    now,
  }: { toolsRunBy: "assure" | "agent"; newId: (kind: "conversation" | "event") => string; now: Date },
): CheckedUpload {
  const plans = new Map<string, ConversationPlan>();
  for (const plan of planConversations(spec, { includeProbes: true })) plans.set(planKey(plan), plan);
  const retries = spec.defaults?.retry_failed ?? 0;

  const ids = new Map<string, string>();
  const tries = new Set<string>();
  body.conversations.forEach((conversation, i) => {
    const at = `body.conversations[${i}]`;
    if (ids.has(conversation.conversation_id)) {
      throw refuse("UPLOAD_CASES_MISMATCH", `${at}.conversation_id`, "a conversation is listed twice");
    }
    ids.set(conversation.conversation_id, newId("conversation"));
    const plan = plans.get(planKey(conversation));
    if (!plan) {
      throw refuse(
        "UPLOAD_CASES_MISMATCH",
        at,
        `${conversation.kind} '${conversation.scenario_id}' repeat ${conversation.repeat_index} is not a case of the spec`,
      );
    }
    const retryLimit = plan.kind === "probe" ? 0 : retries;
    if (conversation.retry > retryLimit || tries.has(`${planKey(conversation)}\0${conversation.retry}`)) {
      throw refuse("UPLOAD_CASES_MISMATCH", `${at}.retry`, `the spec tries a case again at most ${retryLimit} times`);
    }
    tries.add(`${planKey(conversation)}\0${conversation.retry}`);
    if (plan.canary !== (conversation.canary !== null)) {
      throw refuse(
        "UPLOAD_TURNS_MISMATCH",
        `${at}.canary`,
        plan.canary ? "the probe plants a canary" : "the case plants no canary",
      );
    }
  });
  const held = new Set(lastTries(body.conversations).map(planKey));
  for (const [key, plan] of plans) {
    if (!held.has(key)) {
      throw refuse(
        "UPLOAD_CASES_MISMATCH",
        "body.conversations",
        `${plan.kind} '${plan.scenario_id}' repeat ${plan.repeat_index} was not held`,
      );
    }
  }

  const events: LoggedEvent[] = body.trace.map((entry, i) => {
    const at = `body.trace[${i}]`;
    if (entry.sequence !== i + 1) throw refuse("UPLOAD_TRACE_INVALID", `${at}.sequence`, `expected ${i + 1}`);
    // A time to come would schedule its webhook deliveries then: events happened before they were sent
    // (give or take the uploading machine's clock).
    if (Date.parse(entry.occurred_at) > now.getTime() + CLOCK_SKEW_MS) {
      throw refuse("UPLOAD_TRACE_INVALID", `${at}.occurred_at`, "a time that has not come yet");
    }
    if (!UPLOADABLE.has(entry.type)) {
      throw refuse(
        "UPLOAD_TRACE_INVALID",
        `${at}.type`,
        `'${entry.type}' is not a conversation's event: an upload carries no run status, evaluation or finding`,
      );
    }
    const data = RUN_EVENT_DATA[entry.type as RunEventType].safeParse(entry.data);
    if (!data.success) {
      const issue = data.error.issues[0]!;
      throw refuse("UPLOAD_TRACE_INVALID", [`${at}.data`, ...issue.path].join("."), issue.message);
    }
    const where = data.data as { conversation_id: string; turn?: number };
    const id = ids.get(where.conversation_id);
    if (!id) throw refuse("UPLOAD_TRACE_INVALID", `${at}.data.conversation_id`, "not a conversation of the upload");
    return {
      sequence: entry.sequence,
      event_id: newId("event"),
      type: entry.type,
      occurred_at: new Date(entry.occurred_at).toISOString(),
      conversation_id: id,
      turn: where.turn ?? null,
      data: { ...where, conversation_id: id },
    } as LoggedEvent;
  });

  const byConversation = new Map<string, { event: LoggedEvent; index: number }[]>();
  events.forEach((event, index) => {
    const own = byConversation.get(event.conversation_id!);
    if (own) own.push({ event, index });
    else byConversation.set(event.conversation_id!, [{ event, index }]);
  });
  const conversations = body.conversations.map((conversation) => {
    const id = ids.get(conversation.conversation_id)!;
    const plan = plans.get(planKey(conversation))!;
    const own = byConversation.get(id) ?? [];
    checkConversation(plan, conversation.canary, own, toolsRunBy);
    return {
      conversation_id: id,
      kind: conversation.kind,
      scenario_id: conversation.scenario_id,
      repeat_index: conversation.repeat_index,
      attempt: 1,
      retry: conversation.retry,
      retry_outcome: null,
      status: "completed" as const,
      canary: conversation.canary,
      created_at: own[0]!.event.occurred_at,
      ended_at: own.at(-1)!.event.occurred_at,
    };
  });
  return { conversations, events };
}

/** One conversation's events: started and completed, its turns as planned, its tools answered from the mocks. */
function checkConversation(
  plan: ConversationPlan,
  canary: string | null,
  own: readonly { event: LoggedEvent; index: number }[],
  toolsRunBy: "assure" | "agent",
): void {
  const path = (index: number) => `body.trace[${index}]`;
  const first = own[0];
  const last = own.at(-1);
  const name = `${plan.kind} '${plan.scenario_id}' repeat ${plan.repeat_index}`;
  if (first?.event.type !== "conversation.started" || last?.event.type !== "conversation.completed") {
    throw refuse(
      "UPLOAD_TRACE_INVALID",
      first ? path(first.index) : "body.trace",
      `${name}: a conversation's events begin with conversation.started and end with conversation.completed`,
    );
  }
  const started = first.event.data as { kind: string; scenario_id: string; repeat_index: number };
  if (
    started.kind !== plan.kind ||
    started.scenario_id !== plan.scenario_id ||
    started.repeat_index !== plan.repeat_index
  ) {
    throw refuse(
      "UPLOAD_TRACE_INVALID",
      `${path(first.index)}.data`,
      `${name}: conversation.started names another case`,
    );
  }

  const system = [plan.system, canary ? canaryLine(canary) : undefined].filter(Boolean).join("\n\n");
  const users: string[] = [];
  let sentSystem = false;
  const calls = new Map<string, { result: unknown; source: unknown; injected: boolean; index: number } | null>();
  const agentCalls = new Set<string>();
  const ends = { "conversation.started": 0, "conversation.completed": 0 };
  for (const { event, index } of own) {
    if (event.type === "conversation.started" || event.type === "conversation.completed") {
      if (++ends[event.type] > 1) {
        throw refuse("UPLOAD_TRACE_INVALID", path(index), `${name}: ${event.type} twice`);
      }
    }
    if (event.turn !== null && (event.turn < 0 || event.turn > plan.turns.length)) {
      throw refuse("UPLOAD_TURNS_MISMATCH", `${path(index)}.data.turn`, `${name} has ${plan.turns.length} turns`);
    }
    if (event.type === "message.sent" && event.data.role === "system") {
      if (sentSystem || event.turn !== 0 || event.data.content !== system) {
        throw refuse("UPLOAD_TURNS_MISMATCH", `${path(index)}.data.content`, `${name}: not the spec's system prompt`);
      }
      sentSystem = true;
    }
    if (event.type === "message.sent" && event.data.role === "user") {
      const expected = plan.turns[users.length]?.user;
      if (event.turn !== users.length + 1 || event.data.content !== expected) {
        throw refuse(
          "UPLOAD_TURNS_MISMATCH",
          `${path(index)}.data.content`,
          `${name}: turn ${users.length + 1} is not the spec's`,
        );
      }
      users.push(event.data.content);
    }
    if ((event.type === "message.received" || event.type === "tool.called") && event.data.step > plan.max_steps) {
      throw refuse(
        "UPLOAD_TURNS_MISMATCH",
        `${path(index)}.data.step`,
        `${name} takes at most ${plan.max_steps} steps`,
      );
    }
    if (event.type === "tool.called") {
      const { data } = event;
      // An id may come again in a later step (some agents number calls per step), never while its call waits for its result.
      if (calls.get(`${data.call_id}`)) {
        throw refuse(
          "UPLOAD_TRACE_INVALID",
          `${path(index)}.data.call_id`,
          `${name}: call ${data.call_id} made again before its result`,
        );
      }
      if (data.executed_by === "agent") {
        if (toolsRunBy !== "agent") {
          throw refuse(
            "UPLOAD_MOCKS_MISMATCH",
            `${path(index)}.data.executed_by`,
            `${name}: the environment's agent runs no tools of its own: the spec's mocks answer them`,
          );
        }
        agentCalls.add(`${data.call_id}`);
        continue;
      }
      let args: Record<string, unknown> | undefined;
      if (data.arguments_error !== undefined && !same(data.arguments, {})) {
        // Arguments that could not be read are recorded as none: expectations on them judge nothing.
        throw refuse(
          "UPLOAD_TRACE_INVALID",
          `${path(index)}.data.arguments`,
          `${name}: arguments that could not be read are {}`,
        );
      }
      if (data.arguments_error === undefined) {
        try {
          args = JSON.parse(data.arguments_raw === "" ? "{}" : data.arguments_raw) as Record<string, unknown>;
        } catch {
          args = undefined;
        }
        if (args === undefined || !same(args, data.arguments)) {
          throw refuse("UPLOAD_TRACE_INVALID", `${path(index)}.data.arguments`, `${name}: not what arguments_raw says`);
        }
      }
      const answer = answerToolCall(plan.tools, data.name, args, plan.injection);
      calls.set(`${data.call_id}`, { ...answer, index });
    }
    if (event.type === "tool.returned" && event.data.source.kind === "agent") {
      if (!agentCalls.has(`${event.data.call_id}`)) {
        throw refuse(
          "UPLOAD_TRACE_INVALID",
          `${path(index)}.data.call_id`,
          `${name}: an agent's result for a call its agent did not make`,
        );
      }
    }
    if (event.type === "tool.returned" && event.data.source.kind !== "agent") {
      const expected = calls.get(event.data.call_id);
      if (!expected) {
        throw refuse("UPLOAD_TRACE_INVALID", `${path(index)}.data.call_id`, `${name}: a result for a call not made`);
      }
      const { data } = event;
      if (
        !same(data.result, expected.result) ||
        !same(data.source, expected.source) ||
        data.injected !== expected.injected
      ) {
        throw refuse(
          "UPLOAD_MOCKS_MISMATCH",
          `${path(index)}.data.result`,
          `${name}: '${data.name}' was not answered as the spec's mocks answer it`,
        );
      }
      calls.set(data.call_id, null);
    }
  }
  const unanswered = [...calls.values()].find((call) => call !== null);
  if (unanswered) {
    throw refuse(
      "UPLOAD_MOCKS_MISMATCH",
      path(unanswered.index),
      `${name}: a call the spec's mocks answer has no result`,
    );
  }
  if (users.length !== plan.turns.length || (system !== "" && !sentSystem)) {
    throw refuse("UPLOAD_TURNS_MISMATCH", path(first.index), `${name}: not every turn of the spec was asked`);
  }
}
