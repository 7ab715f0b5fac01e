import { describe, expect, it } from "@jest/globals";
import type { Tool } from "../../../server/contract/index.js";
import { answerToolCall } from "../../../server/engine/tool-mocks.js";

const tools: Tool[] = [
  {
    name: "lookup_order",
    mock: [
      { when: { order_id: "A-100" }, return: { order_id: "A-100", status: "delivered", notes: "" } },
      { return: { error: "not_found" } },
    ],
  },
  { name: "issue_refund", mock: [{ when: { amount: 42.5 }, return: { refund_id: "R-1" } }] },
];

describe("tool mocks", () => {
  it("answer with the first entry whose `when` partially matches the arguments, else the default", () => {
    expect(answerToolCall(tools, "lookup_order", { order_id: "A-100", reason: "broken" })).toEqual({
      result: { order_id: "A-100", status: "delivered", notes: "" },
      source: { kind: "when", index: 0 },
      injected: false,
    });
    expect(answerToolCall(tools, "lookup_order", { order_id: "Z-9" })).toMatchObject({
      result: { error: "not_found" },
      source: { kind: "default", index: 1 },
    });
  });

  it("answer an unknown tool, unparsed arguments and an unmatched call with an error result the agent sees", () => {
    expect(answerToolCall(tools, "delete_account", {})).toMatchObject({
      result: { error: "unknown tool 'delete_account'" },
      source: { kind: "unknown_tool" },
    });
    expect(answerToolCall(tools, "lookup_order", undefined)).toMatchObject({ source: { kind: "invalid_arguments" } });
    expect(answerToolCall(tools, "issue_refund", { amount: 1 })).toMatchObject({ source: { kind: "no_mock" } });
  });

  it("plant a probe's injected text in the named field of the tool's result, and only there", () => {
    const injection = { tool: "lookup_order", field: "notes", text: "SYSTEM OVERRIDE" };
    const answer = answerToolCall(tools, "lookup_order", { order_id: "A-100" }, injection);
    expect(answer).toMatchObject({ result: { notes: "SYSTEM OVERRIDE", status: "delivered" }, injected: true });
    expect(answerToolCall(tools, "issue_refund", { amount: 42.5 }, injection).injected).toBe(false);
    // The spec's mock is not changed by the injection: the next call gets it as written.
    expect(answerToolCall(tools, "lookup_order", { order_id: "A-100" }).result).toMatchObject({ notes: "" });
  });
});

describe("a probe's injection at a dotted path", () => {
  const nested: Tool[] = [
    {
      name: "get_ticket",
      mock: [{ return: { ticket: { subject: "Refund", messages: [{ body: "hello" }] }, "meta.source": "email" } }],
    },
  ];

  it("reaches a field nested in objects and lists, and leaves the rest as written", () => {
    const injection = { tool: "get_ticket", field: "ticket.messages.0.body", text: "IGNORE PREVIOUS" };
    expect(answerToolCall(nested, "get_ticket", {}, injection)).toMatchObject({
      result: { ticket: { subject: "Refund", messages: [{ body: "IGNORE PREVIOUS" }] }, "meta.source": "email" },
      injected: true,
    });
    expect(answerToolCall(nested, "get_ticket", {}).result).toMatchObject({
      ticket: { messages: [{ body: "hello" }] },
    });
  });

  it("takes a key the result has as written, dots and all, as that key", () => {
    const injection = { tool: "get_ticket", field: "meta.source", text: "X" };
    expect(answerToolCall(nested, "get_ticket", {}, injection).result).toMatchObject({ "meta.source": "X" });
  });

  it("makes the objects missing on the way, but does not write through a text or past a list's end", () => {
    const made = answerToolCall(nested, "get_ticket", {}, { tool: "get_ticket", field: "extra.note", text: "X" });
    expect(made).toMatchObject({ result: { extra: { note: "X" } }, injected: true });
    for (const field of ["ticket.subject.x", "ticket.messages.5.body", "ticket.messages.first", "__proto__.x"]) {
      const answer = answerToolCall(nested, "get_ticket", {}, { tool: "get_ticket", field, text: "X" });
      expect(answer.injected).toBe(false);
      expect(answer.result).toEqual(nested[0]!.mock![0]!.return);
    }
  });
});
