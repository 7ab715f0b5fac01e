import { describe, expect, it } from "@jest/globals";
import {
  notYetRecorded,
  type RecordedToolCall,
  type TracedToolCall,
} from "../../../server/engine/traces/merge-calls.js";

function traced(name: string, args: Record<string, unknown>, turn: number, callId?: string): TracedToolCall {
  return {
    spanId: `span-${Math.random()}`,
    callId: callId ?? "span-id",
    callIdGiven: callId !== undefined,
    name,
    arguments: args,
    argumentsRaw: JSON.stringify(args),
    startTimeUnixNano: 0n,
    turn,
    step: 1,
  };
}

function recorded(name: string, args: Record<string, unknown>, turn: number, callId?: string): RecordedToolCall {
  return {
    turn,
    step: 1,
    callId: callId ?? `reply_${Math.random()}`,
    idGiven: callId !== undefined,
    name,
    arguments: args,
    hasResult: true,
  };
}

const names = (calls: readonly TracedToolCall[]) => calls.map((c) => `${c.name}@${c.turn}`);

describe("a traced tool call another report already recorded", () => {
  it("is the one the agent gave the same id in both", () => {
    const { fresh, merged } = notYetRecorded(
      [
        traced("lookup_order", { order_id: "A-100" }, 1, "call_1"),
        traced("lookup_order", { order_id: "A-100" }, 1, "call_2"),
      ],
      [recorded("lookup_order", { order_id: "A-100" }, 1, "call_2")],
    );
    expect(merged.map((m) => m.traced.callId)).toEqual(["call_2"]);
    expect(fresh.map((c) => c.callId)).toEqual(["call_1"]);
  });

  it("is, where one report names no id, the one of the same name and arguments (in any key order) in the same turn", () => {
    const { fresh, merged } = notYetRecorded(
      [
        traced("issue_refund", { order_id: "A-100", amount: 42.5 }, 2, "call_9"),
        traced("lookup_order", { order_id: "A-100" }, 1),
        traced("lookup_order", { order_id: "A-100" }, 2),
      ],
      [
        recorded("issue_refund", { amount: 42.5, order_id: "A-100" }, 2),
        recorded("lookup_order", { order_id: "A-100" }, 1),
      ],
    );
    expect(names(merged.map((m) => m.traced))).toEqual(["issue_refund@2", "lookup_order@1"]);
    expect(names(fresh)).toEqual(["lookup_order@2"]);
  });

  it("matches each recorded call once: a call made twice and reported once by the reply is recorded twice in all", () => {
    const { fresh, merged } = notYetRecorded(
      [traced("lookup_order", { order_id: "A-100" }, 1), traced("lookup_order", { order_id: "A-100" }, 1)],
      [recorded("lookup_order", { order_id: "A-100" }, 1)],
    );
    expect(merged).toHaveLength(1);
    expect(fresh).toHaveLength(1);
  });

  it("is never a call of other arguments, nor one both reports named with different ids", () => {
    const { fresh, merged } = notYetRecorded(
      [traced("lookup_order", { order_id: "A-100" }, 1, "call_1"), traced("lookup_order", { order_id: "Z-999" }, 1)],
      [
        recorded("lookup_order", { order_id: "A-100" }, 1, "call_other"),
        recorded("lookup_order", { order_id: "Z-100" }, 1),
      ],
    );
    expect(merged).toEqual([]);
    expect(fresh).toHaveLength(2);
  });
});
