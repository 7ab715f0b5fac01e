import { MAX_NESTING, jsonNestingBeyond } from "../specs/nesting.js";
import type { Agent, AgentReply, ChatMessage, ToolDefinition } from "./agents/types.js";
import type { ConversationPlan } from "./plan.js";
import type { McpLease } from "./mcp-conversations.js";
import type { Recorder } from "./recorder.js";
import { RunFailedError } from "../errors.js";
import { answerToolCall } from "./tool-mocks.js";
import type { ConversationTrace } from "./traces/live-traces.js";

export interface RunConversationOptions {
  plan: ConversationPlan;
  conversationId: string;
  /** Planted in the system prompt when the plan asks for a canary. */
  canary: string | null;
  agent: Agent;
  recorder: Recorder;
  signal: AbortSignal;
  /** Told of each answer of the agent (the run meters its tokens). */
  onReply?: (reply: AgentReply) => void;
  /** The conversation's MCP server, serving the spec's tools and mocks, when the agent runs its own tools. */
  mcp?: McpLease | undefined;
  /** The conversation's trace: each call carries its `traceparent`. */
  trace?: ConversationTrace | undefined;
}

function parseArguments(raw: string): { value: Record<string, unknown> | undefined; error: string | undefined } {
  try {
    const text = raw === "" ? "{}" : raw;
    // Matching, storing and showing arguments walk them: an agent's arguments nested thousands deep are invalid, not a crash.
    if (jsonNestingBeyond(text, MAX_NESTING) !== undefined) {
      return { value: undefined, error: `arguments nest deeper than ${MAX_NESTING} levels` };
    }
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return { value: undefined, error: "arguments are not a JSON object" };
    }
    return { value: value as Record<string, unknown>, error: undefined };
  } catch (error) {
    return { value: undefined, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Holds one conversation: each user turn, then agent calls until it answers in plain text or
 * runs out of steps, playing every tool call from the spec's mocks. Each agent exchange is
 * queued with its tool calls as one batch of events for the next group commit, in the
 * background: the caller's next awaited flush (the run's next status change) makes it durable.
 */
export async function runConversation({
  plan,
  conversationId,
  canary,
  agent,
  recorder,
  signal,
  onReply,
  mcp,
  trace,
}: RunConversationOptions): Promise<void> {
  const { tools } = plan;
  const definitions: ToolDefinition[] = tools.map(({ name, description, parameters }) => ({
    name,
    description,
    parameters,
  }));
  const where = (turn: number) => ({ conversation_id: conversationId, turn });
  const at = (turn: number, step: number) => ({ conversation_id: conversationId, turn, step });
  const messages: ChatMessage[] = [];
  const system = [plan.system, canary ? `Internal reference (confidential): ${canary}` : undefined]
    .filter(Boolean)
    .join("\n\n");
  if (system) {
    messages.push({ role: "system", content: system });
    recorder.record("message.sent", { ...where(0), role: "system", content: system });
  }

  for (const [index, { user }] of plan.turns.entries()) {
    const turn = index + 1;
    messages.push({ role: "user", content: user });
    recorder.record("message.sent", { ...where(turn), role: "user", content: user });
    let answered = false;
    for (let step = 1; step <= plan.max_steps && !answered; step++) {
      if (signal.aborted) throw signal.reason;
      recorder.throwIfFailed();
      let reply;
      mcp?.answering(turn, step);
      try {
        reply = await agent.complete({
          messages,
          tools: definitions,
          conversationId,
          turn,
          mcpUrl: mcp?.url,
          signal,
          traceparent: trace?.callStarted(turn, step),
          onThrottled: (wait) => {
            recorder.record("agent.throttled", { ...at(turn, step), ...wait });
            recorder.flushInBackground();
          },
        });
      } catch (error) {
        if (error instanceof RunFailedError) {
          const type =
            error.failureCause === "agent_contract_violation" ? "agent.response_invalid" : "agent.call_failed";
          recorder.record(type, {
            ...at(turn, step),
            cause: error.failureCause,
            message: error.message,
            ...error.evidence,
          });
        }
        recorder.flushInBackground();
        throw error;
      }
      messages.push({ role: "assistant", content: reply.content, tool_calls: reply.tool_calls });
      recorder.record("message.received", {
        ...at(turn, step),
        role: "assistant",
        content: reply.content,
        tool_calls: reply.tool_calls.map((call) => ({ call_id: call.id, name: call.name })),
        finish_reason: reply.finish_reason,
        latency_ms: reply.latency_ms,
        attempts: reply.attempts,
        model: reply.model,
        usage: reply.usage,
        ...(reply.artifacts?.length ? { artifacts: reply.artifacts } : {}),
      });
      onReply?.(reply);
      for (const call of reply.hosted_tool_calls) {
        recorder.record("tool.called", {
          ...at(turn, step),
          call_id: call.id,
          name: call.name,
          arguments: call.arguments,
          arguments_raw: JSON.stringify(call.arguments),
          executed_by: "agent",
          source: { kind: "reply" },
        });
        trace?.recorded({
          turn,
          step,
          callId: call.id,
          idGiven: !call.id_assigned,
          name: call.name,
          arguments: call.arguments,
          hasResult: call.result !== undefined,
        });
        if (call.result !== undefined) {
          recorder.record("tool.returned", {
            ...at(turn, step),
            call_id: call.id,
            name: call.name,
            result: call.result,
            source: { kind: "agent" },
            injected: false,
          });
        }
      }
      for (const call of reply.tool_calls) {
        const parsed = parseArguments(call.arguments_raw);
        recorder.record("tool.called", {
          ...at(turn, step),
          call_id: call.id,
          name: call.name,
          arguments: parsed.value ?? {},
          arguments_raw: call.arguments_raw,
          ...(parsed.error ? { arguments_error: parsed.error } : {}),
          executed_by: "assure",
          source: { kind: "mock" },
        });
        const answer = answerToolCall(tools, call.name, parsed.value, plan.injection);
        recorder.record("tool.returned", {
          ...at(turn, step),
          call_id: call.id,
          name: call.name,
          result: answer.result,
          source: answer.source,
          injected: answer.injected,
        });
        messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(answer.result) });
      }
      answered = reply.tool_calls.length === 0;
      recorder.flushInBackground();
    }
    if (!answered) {
      recorder.record("turn.step_limit_reached", { ...where(turn), max_steps: plan.max_steps });
      recorder.flushInBackground();
    }
  }
}
