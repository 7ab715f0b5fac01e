import { describe, expect, it } from "@jest/globals";
import { decideRelease, type SlotFacts } from "../../../server/decisions/decide-release.js";

type Gate = NonNullable<SlotFacts["run"]>["gates"][number];
const gate = (gate_id: string, status: Gate["status"]): Gate => ({
  gate_id,
  status,
  reason: `${gate_id} ${status}`,
  evidence_refs: [`/v1/${gate_id}`],
});
const NOW = "2026-11-23T10:00:00.000Z";
const slot = (run: SlotFacts["run"], waiting: SlotFacts["waiting"] = null): SlotFacts => ({
  test_spec_id: "tsp",
  environment_id: "env",
  label: "spec in staging",
  run,
  waiting,
});
const completed = (run_id: string, ...gates: Gate[]): SlotFacts["run"] => ({
  run_id,
  status: "COMPLETED",
  verdict: "PASS",
  failure: null,
  gates,
});

describe("decideRelease", () => {
  it("blocks when nothing was planned", () => {
    expect(decideRelease([], [], NOW)).toMatchObject({
      status: "BLOCKED",
      reasons: [{ status: "untested", blocking: true }],
    });
  });

  it("is pending while a planned run is missing or not terminal, whatever the others say", () => {
    const running = slot({ run_id: "r2", status: "RUNNING", verdict: "PENDING", failure: null, gates: [] });
    const decision = decideRelease([slot(null), running, slot(completed("r3", gate("DET", "failed")))], [], NOW);
    expect(decision.status).toBe("PENDING");
    expect(decision.reasons.map((r) => r.status)).toEqual(["pending", "pending", "failed"]);
    expect(decision.reasons[0]!.reason).toBe("spec in staging: waiting for its run");
  });

  it("counts a run executed outside the service only where the base branch's policy allows it", () => {
    const uploaded = slot({ ...completed("r1", gate("DET", "passed"))!, executor: "local", uploaded_by: "key_1" });
    const policy = { changes: [], mode: "require_approval" as const };
    for (const refused of [decideRelease([uploaded], [], NOW), decideRelease([uploaded], [], NOW, policy)]) {
      expect(refused).toMatchObject({
        status: "BLOCKED",
        reasons: [{ run_id: "r1", gate_id: "executor", status: "failed", blocking: true, waiver_ref: null }],
      });
      expect(refused.reasons[0]!.reason).toMatch(/executed outside the service \(uploaded by key_1\).*never/);
    }
    // Not even a waiver of it lifts it: only the base branch's policy does.
    expect(decideRelease([uploaded], [{ run_id: "r1", gate_id: "executor", ref: "/v1/w" }], NOW).status).toBe(
      "BLOCKED",
    );
    const allowed = decideRelease([uploaded], [], NOW, { ...policy, executedOutsideService: "allow" });
    expect(allowed).toMatchObject({ status: "ALLOWED", reasons: [{ gate_id: "DET", status: "passed" }] });
    const service = slot({ ...completed("r2", gate("DET", "passed"))!, executor: "service", uploaded_by: null });
    expect(decideRelease([service], [], NOW).status).toBe("ALLOWED");
  });

  it("allows only when every gate of every planned run passed, or is waived", () => {
    expect(decideRelease([slot(completed("r1", gate("DET", "passed"), gate("SEC", "passed")))], [], NOW).status).toBe(
      "ALLOWED",
    );
    const inconclusive = [slot(completed("r1", gate("DET", "passed"), gate("TASK", "inconclusive")))];
    expect(decideRelease(inconclusive, [], NOW).status).toBe("BLOCKED");
    const waived = decideRelease(inconclusive, [{ run_id: "r1", gate_id: "TASK", ref: "/v1/w" }], NOW);
    expect(waived).toMatchObject({
      status: "ALLOWED",
      reasons: [{ status: "passed" }, { status: "waived", blocking: false, waiver_ref: "/v1/w" }],
    });
    // A waiver of another run's gate lifts nothing here.
    expect(decideRelease(inconclusive, [{ run_id: "r9", gate_id: "TASK", ref: "/v1/w" }], NOW).status).toBe("BLOCKED");
  });

  it("blocks on a run that could not be judged, as its gate `run`, which a waiver may lift", () => {
    const failed = slot({
      run_id: "r1",
      status: "FAILED",
      verdict: "ERROR",
      failure: { cause: "target_unreachable", message: "connection refused" },
      gates: [],
    });
    expect(decideRelease([failed], [], NOW)).toMatchObject({
      status: "BLOCKED",
      reasons: [{ gate_id: "run", status: "error", reason: expect.stringContaining("target_unreachable") }],
    });
    expect(decideRelease([failed], [{ run_id: "r1", gate_id: "run", ref: "/v1/w" }], NOW).status).toBe("ALLOWED");
  });

  it("waits for what a planned run needs until its deadline, then blocks (a person must look), never before", () => {
    const waiting = { for: "a successful deployment of 'preview'", until: "2026-11-23T10:30:00.000Z" };
    const before = decideRelease([slot(null, waiting)], [], NOW);
    expect(before).toMatchObject({
      status: "PENDING",
      reasons: [
        {
          status: "pending",
          reason: "spec in staging: waiting for a successful deployment of 'preview' until 2026-11-23T10:30:00.000Z",
        },
      ],
    });
    const after = decideRelease([slot(null, waiting)], [], "2026-11-23T10:30:00.000Z");
    expect(after).toMatchObject({
      status: "BLOCKED",
      reasons: [
        {
          status: "error",
          blocking: true,
          reason: expect.stringContaining("gave up waiting for a successful deployment of 'preview'"),
        },
      ],
    });
    // Once the run is there, the wait no longer counts.
    expect(
      decideRelease([slot(completed("r1", gate("DET", "passed")), waiting)], [], "2026-11-23T11:00:00.000Z").status,
    ).toBe("ALLOWED");
  });
});
