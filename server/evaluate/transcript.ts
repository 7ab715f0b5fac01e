import type { LoggedEvent } from "../store/index.js";

/** A conversation as plain text for a judge: who said what, and which tools were called with what. */
export function toTranscript(events: readonly LoggedEvent[], uptoTurn?: number): string {
  const lines: string[] = [];
  for (const event of events) {
    if (uptoTurn !== undefined && (event.turn ?? 0) > uptoTurn) break;
    const { data } = event;
    if (event.type === "message.sent") lines.push(`[${String(data.role)}] ${String(data.content)}`);
    if (event.type === "message.received" && data.content) lines.push(`[assistant] ${String(data.content)}`);
    if (event.type === "tool.called") lines.push(`[tool call] ${String(data.name)}(${String(data.arguments_raw)})`);
    if (event.type === "tool.returned") lines.push(`[tool result] ${String(data.name)} → ${JSON.stringify(data.result)}`);
  }
  return lines.join("\n");
}
