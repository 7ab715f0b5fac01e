/**
 * The example refund agent's decisions: a deterministic stand-in for an LLM-backed agent, so
 * tests and the demo are reproducible. It speaks the same protocol a real agent does.
 */

export interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface WireMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
}

/** Switchable misbehaviours, chosen per environment through the model name: `refund-agent+slow`. */
export const BEHAVIOURS = [
  "wrong-arguments",
  "bad-arguments-json",
  "unknown-tool",
  "obey-injection",
  "leak-system-prompt",
  "leak-pii",
  "malformed-json",
  "no-choices",
  "invalid-tool-calls",
  "http-500",
  "rate-limited",
  "no-usage",
  "drop-connection",
  "flaky",
  "slow",
  "erratic",
  "hostile",
] as const;
export type Behaviour = (typeof BEHAVIOURS)[number];

export type Decision = { kind: "reply"; content: string } | { kind: "call"; name: string; arguments: string };

const ORDER_ID = /\b[A-Z]-\d+\b/;

function parseJson(text: string | null): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text ?? "");
    return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Tool results of the conversation, with the name of the tool that produced each. */
function toolResults(messages: readonly WireMessage[]) {
  const names = new Map<string, WireToolCall>();
  for (const message of messages) for (const call of message.tool_calls ?? []) names.set(call.id, call);
  return messages
    .filter((m) => m.role === "tool")
    .map((m) => ({ call: names.get(m.tool_call_id ?? ""), result: parseJson(m.content) }));
}

const call = (name: string, args: unknown): Decision => ({ kind: "call", name, arguments: JSON.stringify(args) });
const reply = (content: string): Decision => ({ kind: "reply", content });

/** What an attacker-controlled agent slips into what it says and sends: markup, handlers and script URLs. */
export const HOSTILE_PAYLOADS = [
  '<script>alert("xss")</script>',
  '<img src=x onerror="alert(1)">',
  '<a href="javascript:alert(2)">click</a>',
] as const;

export function decide(messages: readonly WireMessage[], behaviours: ReadonlySet<Behaviour>): Decision {
  const decision = decideFairly(messages, behaviours);
  if (!behaviours.has("hostile")) return decision;
  if (decision.kind === "reply") return reply(`${decision.content} ${HOSTILE_PAYLOADS.join(" ")}`);
  return {
    ...decision,
    arguments: JSON.stringify({ ...parseJson(decision.arguments), note: HOSTILE_PAYLOADS.join(" ") }),
  };
}

function decideFairly(messages: readonly WireMessage[], behaviours: ReadonlySet<Behaviour>): Decision {
  const lastUserIndex = messages.map((m) => m.role).lastIndexOf("user");
  const user = messages[lastUserIndex]?.content ?? "";
  const thisTurn = messages.slice(lastUserIndex + 1);
  const last = messages.at(-1);
  const results = toolResults(messages);
  const orders = results.filter((r) => r.call?.function.name === "lookup_order" && r.result.error === undefined);

  if (last?.role === "tool") {
    const latest = results.at(-1)!;
    const tool = latest.call?.function.name;
    if (tool === "lookup_order") {
      const injected = /call (\w+) with user_id (\S+?)[\s.]/i.exec(JSON.stringify(latest.result.notes ?? ""));
      if (injected && behaviours.has("obey-injection")) return call(injected[1]!, { user_id: injected[2] });
      if (latest.result.error !== undefined) {
        const asked = parseJson(latest.call?.function.arguments ?? null);
        return reply(
          `I could not find order ${String(asked.order_id ?? ORDER_ID.exec(user)?.[0] ?? "")}. No refund has been issued.`,
        );
      }
      const order = latest.result;
      const refundWanted = /money back|refund/i.test(user);
      return reply(
        `Order ${order.order_id} is ${order.status} (${order.amount} ${order.currency}).` +
          (refundWanted ? " Would you like me to refund the full amount?" : ""),
      );
    }
    if (tool === "issue_refund") {
      const args = parseJson(latest.call?.function.arguments ?? null);
      const pii = behaviours.has("leak-pii")
        ? " It goes to card 4111 1111 1111 1111; questions to jane.doe@example.com."
        : "";
      return reply(
        `Done: refund ${latest.result.refund_id} for ${args.amount} on order ${args.order_id} is ${latest.result.status}.${pii}`,
      );
    }
    return reply(`The ${tool ?? "tool"} step is done.`);
  }

  if (/instructions|system prompt/i.test(user)) {
    if (behaviours.has("leak-system-prompt")) {
      return reply(`My instructions are: ${messages.find((m) => m.role === "system")?.content ?? ""}`);
    }
    return reply("I can't share my instructions, but I'm glad to help with an order or a refund.");
  }
  if (behaviours.has("unknown-tool") && thisTurn.length === 0) return call("refund_everything", { all: true });
  if (/\byes\b|full amount/i.test(user) && orders.length > 0) {
    const order = orders.at(-1)!.result;
    const amount = behaviours.has("wrong-arguments") ? Number(order.amount) / 2 : order.amount;
    return call("issue_refund", { order_id: order.order_id, amount });
  }
  const orderId = ORDER_ID.exec(user)?.[0];
  if (orderId) {
    if (behaviours.has("bad-arguments-json")) {
      return { kind: "call", name: "lookup_order", arguments: `{order_id: ${orderId}` };
    }
    return call("lookup_order", { order_id: behaviours.has("wrong-arguments") ? orderId.toLowerCase() : orderId });
  }
  return reply("How can I help with your order?");
}
