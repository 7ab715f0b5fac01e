import { readFileSync } from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { parse } from "yaml";
import type { UploadRunBody } from "../../../server/contract/index.js";
import { planConversations } from "../../../server/engine/plan.js";
import { answerToolCall } from "../../../server/engine/tool-mocks.js";
import { ApiError } from "../../../server/errors.js";
import { checkUpload } from "../../../server/runs/check-upload.js";
import { TestSpecDocument } from "../../../server/specs/document.js";

const EXAMPLE = parse(readFileSync(new URL("../../../examples/refund-agent.yaml", import.meta.url), "utf8"));
/** The example's unknown-order scenario, tried again once when it fails, and its canary probe. */
const SPEC = TestSpecDocument.parse({
  ...EXAMPLE,
  defaults: { ...EXAMPLE.defaults, repeat: 1, retry_failed: 1 },
  scenarios: EXAMPLE.scenarios.filter((s: { id: string }) => s.id === "unknown-order"),
  security: EXAMPLE.security.filter((p: { id: string }) => p.id === "system-prompt-leak"),
  gates: EXAMPLE.gates.filter((g: { id: string }) => g.id !== "TASK"),
});

type Upload = Pick<UploadRunBody, "conversations" | "trace">;

/** An upload as an honest `assure test` makes it: each case asked as planned, each tool answered from the mocks. */
function honest(): Upload {
  const upload: Upload = { conversations: [], trace: [] };
  const push = (type: string, data: Record<string, unknown>) =>
    upload.trace.push({ sequence: upload.trace.length + 1, type, occurred_at: "2026-11-27T10:00:00.000Z", data });
  for (const plan of planConversations(SPEC, { includeProbes: true })) {
    const id = `cnv_${plan.kind}_${plan.scenario_id}`;
    const canary = plan.canary ? "CANARY-abc" : null;
    upload.conversations.push({ conversation_id: id, ...plan, retry: 0, canary });
    push("conversation.started", { conversation_id: id, ...plan, attempt: 1 });
    const system = [plan.system, canary && `Internal reference (confidential): ${canary}`].filter(Boolean).join("\n\n");
    if (system) push("message.sent", { conversation_id: id, turn: 0, role: "system", content: system });
    plan.turns.forEach(({ user }, i) => {
      const at = { conversation_id: id, turn: i + 1 };
      push("message.sent", { ...at, role: "user", content: user });
      const reply = { ...at, role: "assistant", finish_reason: "stop", latency_ms: 5, attempts: 1 };
      push("message.received", {
        ...reply,
        step: 1,
        content: null,
        tool_calls: [{ call_id: "c1", name: "lookup_order" }],
      });
      const args = { order_id: "Z-999" };
      push("tool.called", {
        ...at,
        step: 1,
        call_id: "c1",
        name: "lookup_order",
        arguments: args,
        arguments_raw: JSON.stringify(args),
      });
      const answer = answerToolCall(plan.tools, "lookup_order", args, plan.injection);
      push("tool.returned", { ...at, step: 1, call_id: "c1", name: "lookup_order", ...answer });
      push("message.received", { ...reply, step: 2, content: "No such order.", tool_calls: [] });
    });
    push("conversation.completed", { conversation_id: id });
  }
  return upload;
}

let ids = 0;
const check = (upload: Upload, toolsRunBy: "assure" | "agent" = "assure") =>
  checkUpload(SPEC, upload, { toolsRunBy, newId: (kind) => `${kind}_${++ids}`, now: new Date("2026-11-27T11:00:00Z") });
const refusal = (upload: Upload, toolsRunBy?: "assure" | "agent") => {
  try {
    check(upload, toolsRunBy);
  } catch (error) {
    if (error instanceof ApiError) return { code: error.code, path: error.details?.[0]?.path };
    throw error;
  }
  return undefined;
};

describe("checkUpload", () => {
  it("keeps an honest upload under ids of its own, the events naming them", () => {
    const checked = check(honest());
    expect(checked.conversations.map((c) => [c.kind, c.scenario_id, c.canary, c.status])).toEqual([
      ["scenario", "unknown-order", null, "completed"],
      ["probe", "system-prompt-leak", "CANARY-abc", "completed"],
    ]);
    const known = new Set(checked.conversations.map((c) => c.conversation_id));
    expect(checked.events.every((e) => known.has(e.conversation_id!) && !e.conversation_id!.startsWith("cnv_"))).toBe(
      true,
    );
    expect(checked.events.map((e) => e.sequence)).toEqual(checked.events.map((_, i) => i + 1));
  });

  it("takes a case tried again as often as retry_failed allows, never a probe", () => {
    const retried = honest();
    const first = retried.conversations[0]!;
    const again = { ...first, conversation_id: "cnv_again", retry: 1 };
    retried.conversations.push(again);
    const events = retried.trace
      .filter((e) => e.data.conversation_id === first.conversation_id)
      .map((e) => ({ ...e, data: { ...e.data, conversation_id: again.conversation_id } }));
    retried.trace.push(...events.map((e, i) => ({ ...e, sequence: retried.trace.length + i + 1 })));
    expect(refusal(retried)).toBeUndefined();
    const tooMany = structuredClone(retried);
    tooMany.conversations.at(-1)!.retry = 2;
    expect(refusal(tooMany)).toEqual({ code: "UPLOAD_CASES_MISMATCH", path: "body.conversations[2].retry" });
    const probe = honest();
    probe.conversations[1]!.retry = 1;
    expect(refusal(probe)?.code).toBe("UPLOAD_CASES_MISMATCH");
  });

  it("refuses a canary where none was planted, none where one was, and a system prompt not the spec's", () => {
    const noCanary = honest();
    noCanary.conversations[1]!.canary = null;
    expect(refusal(noCanary)).toEqual({ code: "UPLOAD_TURNS_MISMATCH", path: "body.conversations[1].canary" });
    const stray = honest();
    stray.conversations[0]!.canary = "CANARY-x";
    expect(refusal(stray)?.code).toBe("UPLOAD_TURNS_MISMATCH");
    const otherCanary = honest();
    otherCanary.conversations[1]!.canary = "CANARY-other";
    expect(refusal(otherCanary)?.code).toBe("UPLOAD_TURNS_MISMATCH");
    const withoutSystem = honest();
    withoutSystem.trace = withoutSystem.trace
      .filter(
        (e) =>
          !(
            e.type === "message.sent" &&
            e.data.role === "system" &&
            String(e.data.conversation_id).includes("scenario")
          ),
      )
      .map((e, i) => ({ ...e, sequence: i + 1 }));
    expect(refusal(withoutSystem)?.code).toBe("UPLOAD_TURNS_MISMATCH");
  });

  it("refuses tools the agent claims to have run where the spec's mocks answer them, and calls left unanswered", () => {
    const claimed = honest();
    const called = claimed.trace.find((e) => e.type === "tool.called")!;
    called.data.executed_by = "agent";
    expect(refusal(claimed)).toEqual({
      code: "UPLOAD_MOCKS_MISMATCH",
      path: `body.trace[${called.sequence - 1}].data.executed_by`,
    });
    const unanswered = honest();
    const returned = unanswered.trace.findIndex((e) => e.type === "tool.returned");
    unanswered.trace.splice(returned, 1);
    unanswered.trace.forEach((e, i) => (e.sequence = i + 1));
    expect(refusal(unanswered)?.code).toBe("UPLOAD_MOCKS_MISMATCH");
    const rewritten = honest();
    rewritten.trace.find((e) => e.type === "tool.called")!.data.arguments = { order_id: "A-100" };
    expect(refusal(rewritten)?.code).toBe("UPLOAD_TRACE_INVALID");
  });

  it("refuses an event that has not happened yet", () => {
    const future = honest();
    future.trace[2]!.occurred_at = "2026-11-27T12:00:00.000Z";
    expect(refusal(future)).toEqual({ code: "UPLOAD_TRACE_INVALID", path: "body.trace[2].occurred_at" });
  });

  it("refuses a conversation that does not end, or a step past the spec's limit", () => {
    const unended = honest();
    unended.trace = unended.trace
      .filter((e) => e.type !== "conversation.completed")
      .map((e, i) => ({ ...e, sequence: i + 1 }));
    expect(refusal(unended)?.code).toBe("UPLOAD_TRACE_INVALID");
    const long = honest();
    long.trace.find((e) => e.type === "message.received")!.data.step = 99;
    expect(refusal(long)?.code).toBe("UPLOAD_TURNS_MISMATCH");
  });

  /** The honest upload with `events` put in after the event of `type` (the first one), renumbered. */
  const withAfter = (type: string, events: (at: Record<string, unknown>) => Record<string, unknown>[]) => {
    const upload = honest();
    const i = upload.trace.findIndex((e) => e.type === type);
    const inserted = events(upload.trace[i]!.data).map((data) => ({
      sequence: 0,
      type: data.type as string,
      occurred_at: upload.trace[i]!.occurred_at,
      data: Object.fromEntries(Object.entries(data).filter(([k]) => k !== "type")),
    }));
    upload.trace.splice(i + 1, 0, ...inserted);
    upload.trace.forEach((e, n) => (e.sequence = n + 1));
    return upload;
  };

  it("refuses a call made again before its result, an agent's result for a call never made, and a conversation started twice", () => {
    // A second call under the first's id, before the first was answered: the first would never need its mock's answer.
    const again = withAfter("tool.called", (at) => [
      { ...at, type: "tool.called", name: "issue_refund", arguments: {}, arguments_raw: "{}" },
    ]);
    expect(refusal(again)?.code).toBe("UPLOAD_TRACE_INVALID");
    // A result "from the agent" for something no one called, where the spec's mocks answer every call.
    const invented = withAfter("tool.returned", (at) => [
      {
        ...at,
        type: "tool.returned",
        call_id: "c9",
        source: { kind: "agent" },
        result: { refunded: true },
        injected: false,
      },
    ]);
    expect(refusal(invented)?.code).toBe("UPLOAD_TRACE_INVALID");
    expect(refusal(invented, "agent")?.code).toBe("UPLOAD_TRACE_INVALID");
    const twice = withAfter("conversation.started", (at) => [{ ...at, type: "conversation.started" }]);
    expect(refusal(twice)?.code).toBe("UPLOAD_TRACE_INVALID");
  });

  it("refuses arguments recorded for a call whose arguments could not be read", () => {
    const upload = honest();
    const called = upload.trace.find((e) => e.type === "tool.called")!;
    called.data.arguments_raw = "{not json";
    called.data.arguments_error = "not JSON";
    // What the engine records for unreadable arguments: none.
    called.data.arguments = {};
    const answer = upload.trace.find((e) => e.type === "tool.returned")!;
    const plan = [...planConversations(SPEC, { includeProbes: true })][0]!;
    Object.assign(answer.data, answerToolCall(plan.tools, "lookup_order", undefined, plan.injection));
    expect(refusal(upload)).toBeUndefined();
    called.data.arguments = { order_id: "A-100", amount: 1000 };
    expect(refusal(upload)?.code).toBe("UPLOAD_TRACE_INVALID");
  });
});
