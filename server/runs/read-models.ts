import { conversationPath, tracePath, turnPath, type RunEvent, type Turn } from "../contract/index.js";
import { toLoggedEvent, type ConversationRow, type ConversationView, type EventRow } from "../store/index.js";

/** An event row in the spec's v1 envelope. */
export function toRunEvent(row: EventRow): RunEvent {
  return {
    schema_version: "1",
    event_id: row.event_id,
    run_id: row.run_id,
    sequence: row.sequence,
    type: row.type,
    occurred_at: row.occurred_at,
    data: toLoggedEvent(row).data as Record<string, unknown>,
  };
}

export function toConversationSummary(row: ConversationView) {
  return {
    conversation_id: row.conversation_id,
    run_id: row.run_id,
    kind: row.kind,
    scenario_id: row.scenario_id,
    repeat_index: row.repeat_index,
    attempt: row.attempt,
    retry: row.retry,
    counted: row.counted,
    status: row.status,
    created_at: row.created_at,
    ended_at: row.ended_at,
    links: { self: conversationPath(row.run_id, row.conversation_id) },
  };
}

/** The conversation as messages, read from its trace: nothing is stored twice. */
export function toConversation(row: ConversationView, rows: readonly EventRow[]) {
  const messages = [];
  const turns = new Set<number>();
  for (const event of rows.map(toLoggedEvent)) {
    const base = { sequence: event.sequence, turn: event.turn ?? 0, ref: tracePath(row.run_id, event.sequence) };
    if (event.turn !== null && event.turn > 0) turns.add(event.turn);
    if (event.type === "message.sent") messages.push({ ...base, role: event.data.role, content: event.data.content });
    if (event.type === "message.received") {
      messages.push({
        ...base,
        role: "assistant" as const,
        content: event.data.content,
        tool_calls: event.data.tool_calls,
      });
    }
    if (event.type === "tool.returned") {
      messages.push({
        ...base,
        role: "tool" as const,
        content: event.data.result,
        tool_call_id: event.data.call_id,
        name: event.data.name,
      });
    }
  }
  return {
    ...toConversationSummary(row),
    turns: [...turns]
      .sort((a, b) => a - b)
      .map((turn) => ({ turn, ref: turnPath(row.run_id, row.conversation_id, turn) })),
    messages,
  };
}

/** One user turn: what was asked, each agent step with its tool calls and their results, the reply. */
export function toTurn(row: ConversationRow, turn: number, rows: readonly EventRow[]): Turn {
  const steps = new Map<number, Turn["steps"][number]>();
  let user: string | null = null;
  for (const event of rows.map(toLoggedEvent)) {
    const ref = tracePath(row.run_id, event.sequence);
    if (event.type === "message.sent" && event.data.role === "user") user = event.data.content;
    if (event.type === "message.received") {
      const { data } = event;
      steps.set(data.step, {
        step: data.step,
        content: data.content,
        latency_ms: data.latency_ms,
        ref,
        // Calls made over MCP while the agent worked on its answer come before it.
        tool_calls: steps.get(data.step)?.tool_calls ?? [],
      });
    }
    if (event.type === "tool.called") {
      const { data } = event;
      if (!steps.has(data.step)) {
        steps.set(data.step, { step: data.step, content: null, latency_ms: 0, ref, tool_calls: [] });
      }
      steps.get(data.step)!.tool_calls.push({
        call_id: data.call_id,
        name: data.name,
        arguments: data.arguments,
        arguments_raw: data.arguments_raw,
        ...(data.arguments_error ? { arguments_error: data.arguments_error } : {}),
        result: null,
        ref,
      });
    }
    if (event.type === "tool.returned") {
      const call = steps.get(event.data.step)?.tool_calls.find((c) => c.call_id === event.data.call_id);
      if (call) call.result = event.data.result;
    }
  }
  const ordered = [...steps.values()].sort((a, b) => a.step - b.step);
  return {
    conversation_id: row.conversation_id,
    turn,
    user,
    reply: [...ordered].reverse().find((step) => step.content)?.content ?? null,
    steps: ordered,
    events: rows.map((event) => tracePath(row.run_id, event.sequence)),
  };
}
