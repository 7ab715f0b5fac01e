// The engine bench's baseline: a bare client loop that holds the same conversations with the
// agent as the run engine does (server/engine/run-conversation.ts), answering tool calls from
// the spec's mocks (server/engine/tool-mocks.ts), and sends the same request bodies
// (server/engine/agents/openai-chat.ts) the same way (node:http `request` with the global
// agent, as server/net/http-request.ts). No persistence, no validation, no events.
import { request } from "node:http";
import { isDeepStrictEqual } from "node:util";

const DEFAULT_MAX_STEPS = 8; // server/specs/limits.ts DEFAULT_LIMITS
const TIMEOUT_MS = 30_000;

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** server/specs/vars.ts fillPlaceholders, for the text of user turns. */
const fill = (text, row) =>
  text.replace(PLACEHOLDER, (whole, name) => (Object.hasOwn(row, name) ? String(row[name]) : whole));

/** The conversations one run holds, in the engine's order (server/engine/plan.ts, no probes; a table's rows filled in). */
export function planConversations(spec) {
  const defaults = { max_steps: DEFAULT_MAX_STEPS, repeat: 1, ...spec.defaults };
  const plans = [];
  for (const scenario of spec.scenarios ?? []) {
    for (const row of scenario.vars ?? [{}]) {
      for (let r = 1; r <= (scenario.repeat ?? defaults.repeat); r++) {
        plans.push({
          system: scenario.system && fill(scenario.system, row),
          turns: scenario.turns.map((turn) => fill(turn.user, row)),
          max_steps: scenario.max_steps ?? defaults.max_steps,
        });
      }
    }
  }
  return plans;
}

/** server/evaluate/partial-match.ts */
function partialMatch(expected, actual) {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    return Object.entries(expected).every(
      ([key, value]) => Object.hasOwn(actual, key) && partialMatch(value, actual[key]),
    );
  }
  return isDeepStrictEqual(expected, actual);
}

/** server/engine/tool-mocks.ts, without injections (scenarios have none). */
function answerToolCall(tools, name, args) {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) return { error: `unknown tool '${name}'` };
  if (args === undefined) return { error: "arguments are not a JSON object" };
  const mocks = tool.mock ?? [];
  const index = mocks.findIndex((mock) => mock.when !== undefined && partialMatch(mock.when, args));
  const chosen = index >= 0 ? index : mocks.findIndex((mock) => mock.when === undefined);
  if (chosen < 0) return { error: `no mock of '${name}' matches these arguments` };
  return structuredClone(mocks[chosen].return);
}

function parseArguments(raw) {
  try {
    const value = JSON.parse(raw === "" ? "{}" : raw);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** server/net/http-request.ts, minus the egress policy and the size limit. */
function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { accept: "application/json", "content-type": "application/json" },
        timeout: TIMEOUT_MS,
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${url} went silent for ${TIMEOUT_MS} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * A client for one spec against one agent. `holdAll` holds every conversation of a run;
 * with `record`, it also returns the messages of each request it sent.
 */
export function makeConversationClient({ baseUrl, model, spec }) {
  const url = new URL(`${baseUrl}/chat/completions`);
  const plans = planConversations(spec);
  const tools = spec.tools ?? [];
  const wireTools = tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.parameters ?? { type: "object", properties: {} },
    },
  }));

  async function complete(messages, record) {
    if (record) record.push(structuredClone(messages));
    const body = JSON.stringify({
      ...(model ? { model } : {}),
      messages,
      ...(wireTools.length > 0 ? { tools: wireTools } : {}),
    });
    const response = await post(url, body);
    if (response.status !== 200) {
      throw new Error(`The agent answered HTTP ${response.status}: ${response.body.toString("utf8").slice(0, 300)}`);
    }
    const choice = JSON.parse(response.body.toString("utf8")).choices[0];
    return { content: choice.message.content ?? null, tool_calls: choice.message.tool_calls ?? [] };
  }

  async function converse(plan, record) {
    const messages = [];
    if (plan.system) messages.push({ role: "system", content: plan.system });
    let calls = 0;
    for (const user of plan.turns) {
      messages.push({ role: "user", content: user });
      let answered = false;
      for (let step = 1; step <= plan.max_steps && !answered; step++) {
        const reply = await complete(messages, record);
        calls++;
        const assistant = { role: "assistant", content: reply.content };
        if (reply.tool_calls.length > 0) {
          assistant.tool_calls = reply.tool_calls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.function.name, arguments: call.function.arguments },
          }));
        }
        messages.push(assistant);
        for (const call of reply.tool_calls) {
          const result = answerToolCall(tools, call.function.name, parseArguments(call.function.arguments));
          messages.push({ role: "tool", content: JSON.stringify(result), tool_call_id: call.id });
        }
        answered = reply.tool_calls.length === 0;
      }
    }
    return calls;
  }

  return {
    conversations: plans.length,
    /**
     * Holds every conversation of a run, `concurrency` at once as the engine does (each lane
     * takes the next when its last is done); returns the agent calls made.
     */
    async holdAll({ concurrency, record } = { concurrency: 1 }) {
      let next = 0;
      let calls = 0;
      const lane = async () => {
        while (next < plans.length) {
          const index = next++;
          const made = await converse(plans[index], record?.[index]);
          calls += made; // not `calls += await …`: that would add to the value read before the await
        }
      };
      await Promise.all(Array.from({ length: concurrency }, lane));
      return calls;
    },
  };
}

/** One run's conversations, `concurrency` at once. Returns the wall time in ms, the agent calls made and this process's CPU time. */
export async function runBaseline(client, { concurrency }) {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const calls = await client.holdAll({ concurrency });
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { wallMs, calls, cpuMs: (cpu.user + cpu.system) / 1000 };
}
