import { randomBytes } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Run } from "../contract/index.js";
import { RunFailedError } from "../errors.js";
import type { NewId } from "../ids.js";
import type { ConversationRow } from "../store/index.js";
import type { Agent, AgentReply } from "./agents/types.js";
import type { ConversationPlan } from "./plan.js";
import type { McpConversations } from "./mcp-conversations.js";
import type { Recorder } from "./recorder.js";
import { runConversation } from "./run-conversation.js";
import { DEFAULT_TRACE_WAIT_MS, type ConversationTrace, type LiveTraces } from "./traces/live-traces.js";

export interface HoldConversationOptions {
  run: Run;
  plan: ConversationPlan;
  /** Which try of the planned conversation: its attempt (counting interrupted ones) at its retry. */
  attempt: number;
  retry: number;
  agent: Agent;
  /** Who runs the tools the agent calls (its protocol's say). */
  toolsRunBy: "assure" | "agent";
  recorder: Recorder;
  signal: AbortSignal;
  /** Told of each answer of the agent (the run meters its budget). */
  onReply: (reply: AgentReply) => void;
  /** How long to wait for the agent's late spans after its last answer (agents that run their own tools). */
  traceWaitMs?: number | undefined;
}

/** A conversation whose calls to the agent are done: it ends once its agent's late spans are in. */
export interface ConversationHeld {
  /** Its row, still running. */
  conversation: ConversationRow;
  /** Settles when it is completed (its trace recorded): its row, completed; rejects if the run stopped meanwhile. */
  ending: Promise<ConversationRow>;
}

/**
 * Holds one conversation, its row and its start and end recorded; a failure that fails the run is
 * recorded on it before it is thrown. Returns once the agent has answered its last turn, with the
 * conversation's ending: for an agent that runs its own tools, the wait for its late spans (which
 * asks nothing of the agent), then its trace recorded and the conversation completed.
 */
export async function holdConversation(
  {
    clock,
    newId,
    mcp,
    liveTraces,
  }: { clock: Clock; newId: NewId; mcp?: McpConversations | undefined; liveTraces?: LiveTraces | undefined },
  { run, plan, attempt, retry, agent, toolsRunBy, recorder, signal, onReply, traceWaitMs }: HoldConversationOptions,
): Promise<ConversationHeld> {
  const now = () => clock.now().toISOString();
  const conversation: ConversationRow = {
    conversation_id: newId("conversation"),
    run_id: run.run_id,
    kind: plan.kind,
    scenario_id: plan.scenario_id,
    repeat_index: plan.repeat_index,
    attempt,
    retry,
    retry_outcome: null,
    status: "running",
    canary: plan.canary ? `CANARY-${randomBytes(9).toString("base64url")}` : null,
    created_at: now(),
    ended_at: null,
  };
  const context = { conversation_id: conversation.conversation_id };
  // Only the tools of an agent that runs its own are read from its spans (assure's mocks are known).
  const trace = toolsRunBy === "agent" ? liveTraces?.open(run.project_id, conversation.conversation_id) : undefined;
  recorder.record("conversation.started", {
    ...context,
    kind: plan.kind,
    scenario_id: plan.scenario_id,
    repeat_index: plan.repeat_index,
    attempt,
    ...(retry > 0 ? { retry } : {}),
    tools_run_by: toolsRunBy,
    ...(trace ? { trace_id: trace.traceId } : {}),
  });
  recorder.flushInBackground(["createConversation", conversation]);
  // An agent that runs its own tools may load them from the spec's mocks over MCP, at a URL of this conversation.
  const lease =
    toolsRunBy === "agent"
      ? mcp?.open({
          conversationId: conversation.conversation_id,
          tools: plan.tools,
          injection: plan.injection,
          recorder,
          onCall: (call) => trace?.recorded(call),
        })
      : undefined;
  const end = () => {
    lease?.close();
    trace?.close();
  };
  try {
    await runConversation({
      plan,
      conversationId: conversation.conversation_id,
      canary: conversation.canary,
      agent,
      recorder,
      signal,
      onReply,
      mcp: lease,
      trace,
    });
  } catch (error) {
    if (trace && !signal.aborted) recordTrace(recorder, conversation.conversation_id, trace);
    end();
    if (error instanceof RunFailedError && !signal.aborted) {
      recorder.record("conversation.failed", { ...context, cause: error.failureCause });
      await recorder.flush(["finishConversation", conversation.conversation_id, "failed", now()]);
    }
    throw error;
  }

  async function ending(): Promise<ConversationRow> {
    try {
      if (trace && traceWaitMs !== 0) await trace.waitForSpans(traceWaitMs ?? DEFAULT_TRACE_WAIT_MS, signal);
      if (signal.aborted) throw signal.reason;
      if (trace) recordTrace(recorder, conversation.conversation_id, trace);
    } finally {
      end();
    }
    const endedAt = now();
    recorder.record("conversation.completed", context);
    recorder.flushInBackground(["finishConversation", conversation.conversation_id, "completed", endedAt]);
    return { ...conversation, status: "completed", ended_at: endedAt };
  }
  const ended = ending();
  ended.catch(() => undefined); // awaited by the run; a stopped run's rejection is not unhandled meanwhile
  return { conversation, ending: ended };
}

/**
 * What the conversation's trace told, recorded once: each tool the agent ran that no other report
 * recorded, in the order it started them; the result of one recorded without it.
 */
function recordTrace(recorder: Recorder, conversationId: string, trace: ConversationTrace): void {
  if (trace.spanCount === 0) return;
  const { fresh, merged } = trace.toolCalls();
  trace.close();
  for (const call of fresh) {
    const at = { conversation_id: conversationId, turn: call.turn, step: call.step };
    recorder.record("tool.called", {
      ...at,
      call_id: call.callId,
      name: call.name,
      arguments: call.arguments,
      arguments_raw: call.argumentsRaw,
      ...(call.argumentsError ? { arguments_error: call.argumentsError } : {}),
      executed_by: "agent",
      source: { kind: "trace" },
    });
    if (call.result !== undefined) {
      recorder.record("tool.returned", {
        ...at,
        call_id: call.callId,
        name: call.name,
        result: call.result,
        source: { kind: "agent" },
        injected: false,
      });
    }
  }
  for (const { traced, recorded } of merged) {
    if (recorded.hasResult || traced.result === undefined) continue;
    recorder.record("tool.returned", {
      conversation_id: conversationId,
      turn: recorded.turn,
      step: recorded.step,
      call_id: recorded.callId,
      name: recorded.name,
      result: traced.result,
      source: { kind: "agent" },
      injected: false,
    });
  }
  recorder.record("trace.received", {
    conversation_id: conversationId,
    spans: trace.spanCount,
    tool_calls: fresh.length,
  });
}
