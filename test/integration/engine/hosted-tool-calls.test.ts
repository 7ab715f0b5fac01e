import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { AGENT_PROTOCOLS } from "../../../server/engine/agents/index.js";
import type { EndpointProtocol } from "../../../server/contract/index.js";
import { makeEgressPolicy } from "../../../server/net/egress.js";
import { startCannedAgent } from "../../helpers/canned-agent.js";

describe("tools the agent runs itself, and the wire form of the conversation", () => {
  let canned: Awaited<ReturnType<typeof startCannedAgent>>;
  let origin = "";
  beforeAll(async () => {
    canned = await startCannedAgent();
    origin = canned.origin;
  });
  afterAll(() => canned.close());

  const agentOf = (protocol: EndpointProtocol, base: string, headers: Record<string, string> = {}) =>
    AGENT_PROTOCOLS[protocol].makeAgent({
      egress: makeEgressPolicy({ allowlist: ["127.0.0.1"] }),
      target: {
        environment_id: "env_1",
        protocol,
        base_url: base,
        model: "m",
        readiness_path: "/models",
        headers,
        max_concurrency: 1,
        rate_limit_per_minute: null,
        http: null,
      },
      timeoutMs: 5000,
    });
  const tools = [{ name: "lookup_order", parameters: { type: "object", properties: {} } }];
  const call = { tools, conversationId: "cnv_1", turn: 1, signal: new AbortController().signal };

  it("reads a Responses answer: its text, its function calls for the mocks, and the agent's own tool calls", async () => {
    canned.answers.push({
      status: "completed",
      model: "m-1",
      output: [
        { type: "reasoning", id: "rs_1", summary: [] },
        {
          type: "web_search_call",
          id: "ws_1",
          status: "completed",
          action: { type: "search", query: "refund policy" },
        },
        {
          type: "mcp_call",
          id: "mcp_1",
          server_label: "orders",
          name: "find_order",
          arguments: '{"order_id":"A-1"}',
          output: '{"status":"delivered"}',
        },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
        { type: "function_call", call_id: "call_9", name: "lookup_order", arguments: '{"order_id":"A-1"}' },
      ],
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    });
    const reply = await agentOf("openai-responses", `${origin}/v1`).complete({
      ...call,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Where is A-1?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", name: "lookup_order", arguments_raw: "{}" }] },
        { role: "tool", tool_call_id: "call_1", content: '{"error":"not found"}' },
      ],
    });
    expect(reply).toMatchObject({
      content: "Checking.",
      tool_calls: [{ id: "call_9", name: "lookup_order", arguments_raw: '{"order_id":"A-1"}' }],
      hosted_tool_calls: [
        { id: "ws_1", name: "web_search", arguments: { action: { type: "search", query: "refund policy" } } },
        { id: "mcp_1", name: "find_order", arguments: { order_id: "A-1" }, result: '{"status":"delivered"}' },
      ],
      finish_reason: "tool_calls",
      model: "m-1",
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    });
    const sent = canned.received.at(-1)!;
    expect(sent.path).toBe("/v1/responses");
    expect(sent.body).toMatchObject({
      model: "m",
      store: false,
      input: [
        { type: "message", role: "system", content: "Be brief." },
        { type: "message", role: "user", content: "Where is A-1?" },
        { type: "function_call", call_id: "call_1", name: "lookup_order", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: '{"error":"not found"}' },
      ],
      tools: [{ type: "function", name: "lookup_order" }],
    });
  });

  it("refuses a failed Response as a broken contract, naming its error", async () => {
    canned.answers.push({ status: "failed", output: [], error: { code: "server_error", message: "model crashed" } });
    await expect(
      agentOf("openai-responses", `${origin}/v1`).complete({ ...call, messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toMatchObject({
      failureCause: "agent_contract_violation",
      message: expect.stringMatching(/model crashed/),
    });
  });

  it("reads a Messages answer, and writes tool results as one user turn of tool_result blocks", async () => {
    canned.answers.push({
      type: "message",
      role: "assistant",
      model: "claude-x",
      content: [
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "refunds" } },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_1",
          content: [{ type: "web_search_result", url: "https://x" }],
        },
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_2", name: "lookup_order", input: { order_id: "A-1" } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 7, output_tokens: 3 },
    });
    const reply = await agentOf("anthropic-messages", origin, { "Anthropic-Version": "2024-01-01" }).complete({
      ...call,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Where is A-1?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "toolu_a", name: "lookup_order", arguments_raw: '{"order_id":"A-1"}' },
            { id: "toolu_b", name: "lookup_order", arguments_raw: '{"order_id":"A-2"}' },
          ],
        },
        { role: "tool", tool_call_id: "toolu_a", content: "{}" },
        { role: "tool", tool_call_id: "toolu_b", content: "{}" },
      ],
    });
    expect(reply).toMatchObject({
      content: "Let me look.",
      tool_calls: [{ id: "toolu_2", name: "lookup_order", arguments_raw: '{"order_id":"A-1"}' }],
      hosted_tool_calls: [
        {
          id: "srvtoolu_1",
          name: "web_search",
          arguments: { query: "refunds" },
          result: [{ type: "web_search_result", url: "https://x" }],
        },
      ],
      finish_reason: "tool_use",
      usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 },
    });
    const sent = canned.received.at(-1)!;
    expect(sent.path).toBe("/v1/messages");
    // The environment's own version header wins, sent once.
    expect(sent.headers["anthropic-version"]).toBe("2024-01-01");
    expect(sent.body).toMatchObject({
      model: "m",
      system: "Be brief.",
      max_tokens: expect.any(Number),
      messages: [
        { role: "user", content: [{ type: "text", text: "Where is A-1?" }] },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "toolu_a", input: { order_id: "A-1" } },
            { type: "tool_use", id: "toolu_b", input: { order_id: "A-2" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_a", content: "{}" },
            { type: "tool_result", tool_use_id: "toolu_b", content: "{}" },
          ],
        },
      ],
      tools: [{ name: "lookup_order", input_schema: { type: "object" } }],
    });
  });
});
