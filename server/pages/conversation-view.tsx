import type { Evaluation } from "../contract/index.js";
import type { ConversationView as ConversationRow, LoggedEvent } from "../store/index.js";
import { Refs, Status } from "./layout.js";

export interface HeldConversationView {
  conversation: ConversationRow;
  /** Its trace entries, in order. */
  events: LoggedEvent[];
  evaluations: Evaluation[];
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** One trace entry as a reader follows it: who said or did what. Its element is `trace-{sequence}`. */
function Entry({ event }: { event: LoggedEvent }) {
  const id = `trace-${event.sequence}`;
  switch (event.type) {
    case "message.sent":
      return (
        <div class="entry" id={id}>
          <span class="who">{event.data.role === "system" ? "System prompt" : "User"}</span>
          <pre>{event.data.content}</pre>
        </div>
      );
    case "message.received": {
      const usage = event.data.usage ? `${event.data.usage.total_tokens} tokens` : "no usage reported";
      return (
        <div class="entry" id={id}>
          <span class="who">Agent</span>{" "}
          <span class="muted">
            step {event.data.step}, {event.data.latency_ms} ms, {usage}
            {event.data.model ? `, ${event.data.model}` : ""}
          </span>
          {event.data.content !== null && <pre>{event.data.content}</pre>}
          {event.data.tool_calls.length > 0 && (
            <div class="muted">calls {event.data.tool_calls.map((call) => call.name).join(", ")}</div>
          )}
        </div>
      );
    }
    case "tool.called":
      return (
        <div class="entry" id={id}>
          <span class="who">Tool call</span> <code>{event.data.name}</code>{" "}
          <span class="muted">({event.data.call_id})</span>
          <pre>{event.data.arguments_raw}</pre>
          {event.data.arguments_error && <div class="error">{event.data.arguments_error}</div>}
        </div>
      );
    case "tool.returned":
      return (
        <div class="entry" id={id}>
          <span class="who">Mocked result</span> <code>{event.data.name}</code>{" "}
          <span class="muted">
            ({event.data.source.kind}
            {event.data.injected ? ", with the probe's injection" : ""})
          </span>
          <pre>{json(event.data.result)}</pre>
        </div>
      );
    case "tools.listed":
      return (
        <div class="entry muted" id={id}>
          listed the mocked tools over MCP: <code>{event.data.tools.join(", ")}</code>
        </div>
      );
    case "conversation.started":
    case "conversation.completed":
      return (
        <div class="entry muted" id={id}>
          {event.type === "conversation.started" ? "started" : "completed"} at <code>{event.occurred_at}</code>
        </div>
      );
    default:
      return (
        <div class="entry muted" id={id}>
          {event.type} <code>{json(event.data)}</code>
        </div>
      );
  }
}

/** A check's result on the page: `evaluation-{id}`, with its evidence. */
export function EvaluationView({
  evaluation,
  hrefOf,
}: {
  evaluation: Evaluation;
  hrefOf: (ref: string) => string | undefined;
}) {
  const judge = `${evaluation.judge.provider}/${evaluation.judge.model}`;
  return (
    <tr id={`evaluation-${evaluation.evaluation_id}`}>
      <td>
        <code>{evaluation.metric_id}</code>
        {evaluation.spec_path && <div class="muted">{evaluation.spec_path}</div>}
      </td>
      <td>
        {evaluation.scope}
        {evaluation.turn !== null ? ` ${evaluation.turn}` : ""}
      </td>
      <td>
        {evaluation.score} / {evaluation.threshold}
      </td>
      <td>
        <Status value={evaluation.status} />
      </td>
      <td>{judge}</td>
      <td>{evaluation.reason}</td>
      <td>
        <Refs refs={evaluation.evidence_refs} hrefOf={hrefOf} max={5} />
      </td>
    </tr>
  );
}

export function EvaluationTable({
  evaluations,
  hrefOf,
}: {
  evaluations: readonly Evaluation[];
  hrefOf: (ref: string) => string | undefined;
}) {
  return (
    <table>
      <thead>
        <tr>
          <th>Check</th>
          <th>Scope</th>
          <th>Score / threshold</th>
          <th>Status</th>
          <th>Judge</th>
          <th>Reason</th>
          <th>Evidence</th>
        </tr>
      </thead>
      <tbody>
        {evaluations.map((evaluation) => (
          <EvaluationView evaluation={evaluation} hrefOf={hrefOf} />
        ))}
      </tbody>
    </table>
  );
}

/**
 * A conversation as it happened: each user turn (`turn-{conversation}-{n}`) with the agent's
 * replies, its tool calls and their mocked results inline, then the checks of it.
 */
export function ConversationBlock({
  held,
  hrefOf,
}: {
  held: HeldConversationView;
  hrefOf: (ref: string) => string | undefined;
}) {
  const { conversation, events, evaluations } = held;
  const turns = [
    ...new Set(events.flatMap((event) => (event.turn !== null && event.turn > 0 ? [event.turn] : []))),
  ].sort((a, b) => a - b);
  // What is not in a user turn (its start, the system prompt, its end) stays where it happened.
  const firstTurn = events.find((event) => event.turn !== null && event.turn > 0)?.sequence ?? Infinity;
  const outside = events.filter((event) => event.turn === null || event.turn === 0);
  const before = outside.filter((event) => event.sequence < firstTurn);
  const after = outside.filter((event) => event.sequence > firstTurn);
  const tries = conversation.retry > 0 ? `, try ${conversation.retry + 1}` : "";
  return (
    <section class="conversation" id={`conversation-${conversation.conversation_id}`}>
      <h3>
        {conversation.kind === "probe" ? "Security probe" : "Scenario"} <code>{conversation.scenario_id}</code>, repeat{" "}
        {conversation.repeat_index}
        {tries} <Status value={conversation.status} />
        {!conversation.counted && conversation.status === "completed" && (
          <span class="muted"> (tried again: not counted)</span>
        )}
      </h3>
      <div class="muted">
        <code>{conversation.conversation_id}</code>, attempt {conversation.attempt}
      </div>
      {before.map((event) => (
        <Entry event={event} />
      ))}
      {turns.map((turn) => (
        <div class="turn" id={`turn-${conversation.conversation_id}-${turn}`}>
          <div class="muted">Turn {turn}</div>
          {events
            .filter((event) => event.turn === turn)
            .map((event) => (
              <Entry event={event} />
            ))}
        </div>
      ))}
      {after.map((event) => (
        <Entry event={event} />
      ))}
      {evaluations.length > 0 && <EvaluationTable evaluations={evaluations} hrefOf={hrefOf} />}
    </section>
  );
}
