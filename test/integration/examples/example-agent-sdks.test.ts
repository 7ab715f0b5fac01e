import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import OpenAI from "openai";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";

/**
 * Before assure's adapters are tested against the example agent, the official client SDKs prove
 * that the example speaks each protocol: what they send, it reads; what it answers, they parse.
 */
describe("the example agent, through the protocols' official SDKs", () => {
  let agent: ExampleAgent;
  const lookupOrder = {
    name: "lookup_order",
    description: "Look up an order by id",
    parameters: { type: "object" as const, properties: { order_id: { type: "string" } }, required: ["order_id"] },
  };
  const order = { order_id: "A-100", status: "delivered", amount: 42.5, currency: "EUR" };

  beforeAll(async () => {
    agent = await startExampleAgent();
  });
  afterAll(() => agent.close());

  it("speaks OpenAI Chat Completions: a function call, its output, the answer", async () => {
    const client = new OpenAI({ apiKey: "test", baseURL: agent.baseUrlFor("openai-chat"), maxRetries: 0 });
    const tools = [{ type: "function" as const, function: lookupOrder }];
    const first = await client.chat.completions.create({
      model: "refund-agent",
      messages: [{ role: "user", content: "Where is order A-100?" }],
      tools,
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && call.function).toEqual({
      name: "lookup_order",
      arguments: '{"order_id":"A-100"}',
    });
    const second = await client.chat.completions.create({
      model: "refund-agent",
      messages: [
        { role: "user", content: "Where is order A-100?" },
        first.choices[0]!.message,
        { role: "tool", tool_call_id: call.id, content: JSON.stringify(order) },
      ],
      tools,
    });
    expect(second.choices[0]!.message.content).toBe("Order A-100 is delivered (42.5 EUR).");
    expect(second.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("speaks OpenAI Responses: a function_call item, its function_call_output, the output text", async () => {
    const client = new OpenAI({ apiKey: "test", baseURL: agent.baseUrlFor("openai-responses"), maxRetries: 0 });
    const tools = [{ type: "function" as const, strict: false, ...lookupOrder }];
    const first = await client.responses.create({
      model: "refund-agent",
      instructions: "You are a refunds assistant.",
      input: "Where is order A-100?",
      tools,
      store: false,
    });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ name: "lookup_order", arguments: '{"order_id":"A-100"}' });
    const second = await client.responses.create({
      model: "refund-agent",
      input: [
        { role: "user", content: "Where is order A-100? I want my money back." },
        ...first.output.filter((item) => item.type === "function_call"),
        {
          type: "function_call_output",
          call_id: call!.type === "function_call" ? call!.call_id : "",
          output: JSON.stringify(order),
        },
      ],
      tools,
      store: false,
    });
    expect(second.output_text).toBe(
      "Order A-100 is delivered (42.5 EUR). Would you like me to refund the full amount?",
    );
    expect(second.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("speaks Anthropic Messages: a tool_use block, its tool_result, the text", async () => {
    const client = new Anthropic({ apiKey: "test", baseURL: agent.baseUrlFor("anthropic-messages"), maxRetries: 0 });
    const tools = [
      { name: lookupOrder.name, description: lookupOrder.description, input_schema: lookupOrder.parameters },
    ];
    const first = await client.messages.create({
      model: "refund-agent",
      max_tokens: 1024,
      system: "You are a refunds assistant.",
      messages: [{ role: "user", content: "Where is order A-100?" }],
      tools,
    });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((block) => block.type === "tool_use");
    expect(use).toMatchObject({ name: "lookup_order", input: { order_id: "A-100" } });
    const second = await client.messages.create({
      model: "refund-agent",
      max_tokens: 1024,
      messages: [
        { role: "user", content: "Where is order A-100?" },
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: use!.type === "tool_use" ? use!.id : "",
              content: JSON.stringify(order),
            },
          ],
        },
      ],
      tools,
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content).toEqual([{ type: "text", text: "Order A-100 is delivered (42.5 EUR)." }]);
    expect(second.usage.output_tokens).toBeGreaterThan(0);
  });

  it("refuses, as each API does, a request without the conversation", async () => {
    const openai = new OpenAI({ apiKey: "test", baseURL: agent.baseUrl, maxRetries: 0 });
    await expect(openai.responses.create({ model: "refund-agent" } as never)).rejects.toMatchObject({ status: 400 });
    const anthropic = new Anthropic({ apiKey: "test", baseURL: agent.baseUrlFor("anthropic-messages"), maxRetries: 0 });
    await expect(anthropic.messages.create({ model: "refund-agent", messages: [] } as never)).rejects.toMatchObject({
      status: 400,
    });
  });
});
