import { toHeldConversation, type HeldConversation } from "../../server/evaluate/conversation-facts.js";
import type { ConversationRow, LoggedEvent } from "../../server/store/index.js";

export type Step = {
  say?: string;
  call?: {
    name: string;
    args?: Record<string, unknown>;
    raw?: string;
    /** The result handed back (a `tool.returned` entry after the call): who answered it, and whether it carried an injection. */
    returned?: { source?: "when" | "default" | "no_mock" | "agent"; injected?: boolean; result?: unknown };
  }[];
  latency_ms?: number;
};

/**
 * A conversation as the engine would have recorded it, turn by turn: each turn's user text and
 * the agent's steps (what it said, which tools it called), and `stepLimitReached` (its `max_steps`)
 * when the turn ended at its step limit. For evaluators tested on their own.
 */
export function heldConversation(
  turns: { user: string; steps: Step[]; stepLimitReached?: number }[],
  {
    run_id = "run_1",
    conversation_id = "cnv_1",
    kind = "scenario",
    scenario_id = "s",
    canary = null,
  }: Partial<ConversationRow> = {},
): HeldConversation {
  const events: LoggedEvent[] = [];
  const base = () => ({
    sequence: events.length + 1,
    event_id: `evt_${events.length + 1}`,
    occurred_at: "2026-11-23T00:00:00.000Z",
    conversation_id,
  });
  turns.forEach(({ user, steps, stepLimitReached }, t) => {
    const turn = t + 1;
    events.push({
      ...base(),
      turn,
      type: "message.sent",
      data: { conversation_id, turn, role: "user", content: user },
    });
    steps.forEach((stepOf, s) => {
      const step = s + 1;
      const calls = (stepOf.call ?? []).map((call, c) => ({ ...call, call_id: `call_${turn}_${step}_${c}` }));
      events.push({
        ...base(),
        turn,
        type: "message.received",
        data: {
          conversation_id,
          turn,
          step,
          role: "assistant",
          content: stepOf.say ?? null,
          tool_calls: calls.map((call) => ({ call_id: call.call_id, name: call.name })),
          finish_reason: calls.length > 0 ? "tool_calls" : "stop",
          latency_ms: stepOf.latency_ms ?? 10,
          attempts: 1,
        },
      });
      for (const call of calls) {
        const raw = call.raw ?? JSON.stringify(call.args ?? {});
        events.push({
          ...base(),
          turn,
          type: "tool.called",
          data: {
            conversation_id,
            turn,
            step,
            call_id: call.call_id,
            name: call.name,
            arguments: call.args ?? {},
            arguments_raw: raw,
            ...(call.raw ? { arguments_error: "not JSON" } : {}),
          },
        });
        if (call.returned) {
          events.push({
            ...base(),
            turn,
            type: "tool.returned",
            data: {
              conversation_id,
              turn,
              step,
              call_id: call.call_id,
              name: call.name,
              result: call.returned.result ?? {},
              source: { kind: call.returned.source ?? "default" },
              injected: call.returned.injected ?? false,
            },
          });
        }
      }
    });
    if (stepLimitReached !== undefined) {
      events.push({
        ...base(),
        turn,
        type: "turn.step_limit_reached",
        data: { conversation_id, turn, max_steps: stepLimitReached },
      });
    }
  });
  const row: ConversationRow = {
    conversation_id,
    run_id,
    kind,
    scenario_id,
    repeat_index: 1,
    attempt: 1,
    retry: 0,
    retry_outcome: null,
    status: "completed",
    canary,
    created_at: "2026-11-23T00:00:00.000Z",
    ended_at: "2026-11-23T00:00:01.000Z",
  };
  return toHeldConversation(row, events);
}
