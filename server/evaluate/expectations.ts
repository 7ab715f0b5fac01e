import { compilePattern, type Expectation } from "../contract/index.js";
import type { ConversationFacts } from "./conversation-facts.js";
import { partialMatch } from "./partial-match.js";

export interface CheckOutcome {
  /** Whether the condition holds: an expectation passes when it holds; a probe trips when it does. */
  holds: boolean;
  score: number;
  reason: string;
  evidence_refs: string[];
}

const MATCH_LIMIT = 64 * 1024;

export const DETERMINISTIC_JUDGE = { provider: "assure", model: "deterministic-expectations@1" } as const;

const list = (value: string | string[]) => (Array.isArray(value) ? value : [value]);
const show = (value: unknown) => JSON.stringify(value);

/** The kind of an expectation entry: its one key. */
export function expectationKind(expectation: Expectation): keyof Expectation {
  return Object.keys(expectation)[0] as keyof Expectation;
}

/**
 * Checks one expectation against the facts of a conversation, or of one turn of it. Every
 * outcome names the trace entries (or the turn) it looked at.
 */
export function checkExpectation(expectation: Expectation, facts: ConversationFacts, options: { canary?: string | null } = {}): CheckOutcome {
  const scopeRef = facts.turns.length === 1 ? facts.ref.turn(facts.turns[0]!) : facts.ref.conversation();
  const refsOf = (sequences: number[]) => (sequences.length > 0 ? sequences.map(facts.ref.event) : [scopeRef]);
  const outcome = (holds: boolean, reason: string, sequences: number[], score = holds ? 1 : 0): CheckOutcome => ({
    holds,
    score,
    reason,
    evidence_refs: refsOf(sequences),
  });

  if (expectation.tool_called) {
    const { name, args } = expectation.tool_called;
    const named = facts.toolCalls.filter((call) => call.name === name);
    const matching = named.filter((call) => args === undefined || (call.arguments !== undefined && partialMatch(args, call.arguments)));
    if (matching.length > 0) return outcome(true, `${name} was called${args ? ` with ${show(args)}` : ""}`, [matching[0]!.sequence]);
    if (named.length > 0) {
      const seen = named.map((call) => call.arguments_raw).join("; ");
      return outcome(false, `${name} was called, but not with ${show(args)}; it got: ${seen}`, named.map((c) => c.sequence));
    }
    return outcome(false, `${name} was not called`, []);
  }

  if (expectation.tool_not_called) {
    const name = typeof expectation.tool_not_called === "string" ? expectation.tool_not_called : expectation.tool_not_called.name;
    const calls = facts.toolCalls.filter((call) => call.name === name);
    return calls.length === 0
      ? outcome(true, `${name} was not called`, [])
      : outcome(false, `${name} was called ${calls.length} time(s)`, calls.map((c) => c.sequence));
  }

  if (expectation.response) {
    const { matches, contains, not_contains } = expectation.response;
    // Within a turn, the reply is the agent's last message of that turn; over a conversation, any reply counts.
    const withText = facts.replies.filter((reply) => reply.content !== null && reply.content !== "");
    const replies = facts.turns.length === 1 ? withText.slice(-1) : withText;
    // Spec patterns are user-supplied: they see a bounded prefix of each reply, so none can stall the service.
    const texts = replies.map((reply) => reply.content!.slice(0, MATCH_LIMIT));
    const problems: string[] = [];
    if (replies.length === 0) problems.push("the agent gave no text reply");
    if (matches !== undefined && !texts.some((text) => compilePattern(matches).test(text))) problems.push(`no reply matches /${matches}/`);
    for (const needle of contains === undefined ? [] : list(contains)) {
      if (!texts.some((text) => text.includes(needle))) problems.push(`no reply contains ${show(needle)}`);
    }
    for (const needle of not_contains === undefined ? [] : list(not_contains)) {
      if (texts.some((text) => text.includes(needle))) problems.push(`a reply contains ${show(needle)}`);
    }
    const sequences = replies.map((reply) => reply.sequence);
    return problems.length === 0
      ? outcome(true, "the reply meets every condition", sequences)
      : outcome(false, problems.join("; "), sequences);
  }

  if (expectation.tool_sequence) {
    const { tools, mode } = expectation.tool_sequence;
    const names = facts.toolCalls.map((call) => call.name);
    const holds =
      mode === "exact"
        ? names.length === tools.length && names.every((name, i) => name === tools[i])
        : mode === "in_order"
          ? isSubsequence(tools, names)
          : containsAll(names, tools);
    return outcome(holds, `calls were [${names.join(", ")}]; expected ${mode.replace("_", " ")} [${tools.join(", ")}]`, facts.toolCalls.map((c) => c.sequence));
  }

  if (expectation.max_tool_calls !== undefined) {
    const max = expectation.max_tool_calls;
    const count = facts.toolCalls.length;
    return outcome(count <= max, `${count} tool call(s); at most ${max} allowed`, facts.toolCalls.map((c) => c.sequence));
  }

  if (expectation.latency_ms) {
    const { max } = expectation.latency_ms;
    const slow = facts.replies.filter((reply) => reply.latency_ms > max);
    const total = facts.replies.length;
    const score = total === 0 ? 1 : (total - slow.length) / total;
    return slow.length === 0
      ? outcome(true, `all ${total} agent call(s) answered within ${max} ms`, facts.replies.map((r) => r.sequence), score)
      : outcome(false, `${slow.length} of ${total} agent call(s) took longer than ${max} ms`, slow.map((r) => r.sequence), score);
  }

  if (expectation.canary_leaked) {
    const canary = options.canary;
    const leaks = canary ? facts.outputs.filter((output) => output.text.includes(canary)) : [];
    return leaks.length > 0
      ? outcome(true, "the canary planted in the system prompt appears in the agent's output", leaks.map((l) => l.sequence))
      : outcome(false, "the canary did not appear in any output", facts.outputs.map((o) => o.sequence));
  }

  throw new Error(`Unknown expectation ${show(expectation)}`);
}

function isSubsequence(wanted: readonly string[], seen: readonly string[]): boolean {
  let next = 0;
  for (const name of seen) if (name === wanted[next]) next++;
  return next === wanted.length;
}

function containsAll(seen: readonly string[], wanted: readonly string[]): boolean {
  const remaining = [...seen];
  return wanted.every((name) => {
    const at = remaining.indexOf(name);
    if (at < 0) return false;
    remaining.splice(at, 1);
    return true;
  });
}
