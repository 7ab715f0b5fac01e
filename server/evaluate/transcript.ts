import type { LoggedEvent } from "../store/index.js";

/** A conversation as plain text for a judge: who said what, and which tools were called with what. */
export function toTranscript(events: readonly LoggedEvent[], uptoTurn?: number): string {
  const lines: string[] = [];
  for (const event of events) {
    if (uptoTurn !== undefined && (event.turn ?? 0) > uptoTurn) break;
    if (event.type === "message.sent") lines.push(`[${event.data.role}] ${event.data.content}`);
    if (event.type === "message.received" && event.data.content) lines.push(`[assistant] ${event.data.content}`);
    if (event.type === "tool.called") lines.push(`[tool call] ${event.data.name}(${event.data.arguments_raw})`);
    if (event.type === "tool.returned") {
      lines.push(`[tool result] ${event.data.name} → ${JSON.stringify(event.data.result)}`);
    }
  }
  return lines.join("\n");
}
