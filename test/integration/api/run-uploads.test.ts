import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { startJudgeServer } from "../../helpers/judge-server.js";
import { startRun, waitForRun } from "../../helpers/runs.js";
import { waitFor } from "../../helpers/wait.js";
import { renderDecisionSummary } from "../../../server/releases/report/render-markdown.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { uploadOf, type UploadBody } from "../../helpers/uploads.js";

describe("POST /v1/runs/uploads: a run held outside the service, judged by it", () => {
  let agent: ExampleAgent;
  let judge: Awaited<ReturnType<typeof startJudgeServer>>;
  let t: TestService;
  let p: SeededProject;
  let held: { run_id: string; verdict: string; executor: string; links: { html: string } };
  let upload: UploadBody;
  let keys = 0;
  const send = (body: unknown, key = `upload-${++keys}`) =>
    p.client.post("/v1/runs/uploads", body, { headers: { "idempotency-key": key } });
  const copy = () => structuredClone(upload);

  beforeAll(async () => {
    agent = await startExampleAgent();
    judge = await startJudgeServer();
    t = await startTestService({
      env: {
        ASSURE_WORKERS: "2",
        ASSURE_JUDGE_BASE_URL: judge.baseUrl,
        ASSURE_JUDGE_MODEL: "judge-model-1",
        ASSURE_JUDGE_API_KEY: "judge-key",
      },
    });
    p = await seedProject(t, agent.baseUrl);
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    held = await waitForRun(p.client, run_id);
    upload = await uploadOf(p.client, run_id);
  });
  afterAll(async () => {
    await t?.close();
    await judge?.close();
    await agent?.close();
  });

  it("stores an upload as executed locally, by whom, and judges it with the service's evaluators and judge", async () => {
    expect(held).toMatchObject({ verdict: "PASS", executor: "service", uploaded_by: null });
    const judged = judge.requests.length;
    const response = await send(upload);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ status: "EVALUATING", verdict: "PENDING", executor: "local" });
    expect(response.body.uploaded_by).toEqual(expect.any(String));
    expect(response.body.uploaded_by).toBe(response.body.started_by);
    const run = await waitForRun(p.client, response.body.run_id);
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS", executor: "local" });
    const evidence = (await p.client.get(`/v1/runs/${run.run_id}/evidence`)).body;
    expect(evidence).toMatchObject({ executor: "local", uploaded_by: run.uploaded_by });
    expect(evidence.gates.map((g: { id: string; status: string }) => [g.id, g.status])).toEqual([
      ["DET", "passed"],
      ["TASK", "passed"],
      ["SEC", "passed"],
    ]);
    const original = (await p.client.get(`/v1/runs/${held.run_id}/evidence`)).body;
    expect(evidence.evaluations).toEqual(original.evaluations);
    // The judge was asked again: the upload's metrics are the service's own judgement.
    expect(judge.requests.length).toBeGreaterThan(judged);
    const metric = (await p.client.get(`/v1/runs/${run.run_id}/evaluations?metric_id=task_completion`)).body.data;
    expect(metric[0].judge).toMatchObject({ model: "judge-model-1" });
    // Its page says so, as the service's own runs' pages say theirs.
    const page = await (await fetch(`${t.baseUrl}${run.links.html}`)).text();
    expect(page).toContain(
      `outside the service (<code>executor: local</code>), uploaded by <code>${run.uploaded_by}</code>`,
    );
    const servicePage = await (await fetch(`${t.baseUrl}${held.links.html}`)).text();
    expect(servicePage).toContain("the service (<code>executor: service</code>)");
    // Its conversations and trace are read as any run's.
    const conversations = (await p.client.get(`/v1/runs/${run.run_id}/conversations?limit=200`)).body.data;
    expect(conversations).toHaveLength(upload.conversations.length);
    const trace = (await p.client.get(`/v1/runs/${run.run_id}/trace?limit=1`)).body.data;
    expect(trace[0]).toMatchObject({ sequence: 1, type: "conversation.started" });
  });

  it("judges a tampered upload on its conversations, and refuses one that claims its own verdict", async () => {
    const tampered = copy();
    for (const entry of tampered.trace) {
      if (entry.type === "message.received" && /refund/i.test(entry.data.content ?? "")) entry.data.content = "Done.";
    }
    const claimsPass = { ...tampered, verdict: "PASS" };
    const refused = await send(claimsPass);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("VALIDATION_FAILED");

    const withStatus = copy();
    withStatus.trace.push({
      sequence: withStatus.trace.length + 1,
      type: "run.status_changed",
      occurred_at: new Date().toISOString(),
      data: { from: "EVALUATING", to: "COMPLETED", verdict: "PASS" },
    });
    const statusRefused = await send(withStatus);
    expect(statusRefused.status).toBe(422);
    expect(statusRefused.body.error).toMatchObject({
      code: "UPLOAD_TRACE_INVALID",
      details: [{ path: `body.trace[${withStatus.trace.length - 1}].type` }],
    });

    const accepted = await send(tampered);
    expect(accepted.status).toBe(201);
    const run = await waitForRun(p.client, accepted.body.run_id);
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "FAIL", executor: "local" });
    const evidence = (await p.client.get(`/v1/runs/${run.run_id}/evidence`)).body;
    expect(evidence.gates.find((g: { id: string }) => g.id === "DET").status).toBe("failed");
  });

  it("refuses an upload that does not match its spec version, with the envelope, storing nothing", async () => {
    const fullRefund = (u: UploadBody) => u.conversations.find((c) => c.scenario_id === "full-refund")!.conversation_id;
    const cases: [string, (u: UploadBody) => void][] = [
      [
        "UPLOAD_CASES_MISMATCH",
        (u) => {
          const dropped = u.conversations.pop()!;
          u.trace = u.trace
            .filter((e) => e.data.conversation_id !== dropped.conversation_id)
            .map((e, i) => ({ ...e, sequence: i + 1 }));
        },
      ],
      ["UPLOAD_CASES_MISMATCH", (u) => void (u.conversations[0]!.scenario_id = "not-in-the-spec")],
      [
        "UPLOAD_TURNS_MISMATCH",
        (u) => {
          const user = u.trace.find(
            (e) => e.type === "message.sent" && e.data.role === "user" && e.data.conversation_id === fullRefund(u),
          )!;
          user.data.content = "Refund everything, no questions asked.";
        },
      ],
      [
        "UPLOAD_MOCKS_MISMATCH",
        (u) => {
          const returned = u.trace.find((e) => e.type === "tool.returned" && e.data.name === "lookup_order")!;
          returned.data.result = { order_id: "A-100", status: "delivered", amount: 4250, currency: "EUR", notes: "" };
        },
      ],
      ["UPLOAD_TRACE_INVALID", (u) => void (u.trace[3]!.sequence = 99)],
      ["UPLOAD_TRACE_INVALID", (u) => void (u.trace[0]!.data.conversation_id = "cnv_elsewhere")],
    ];
    await waitFor(async () => (await t.service.store.countRows()).jobs === 0 || undefined, "earlier runs to be judged");
    const before = await t.service.store.countRows();
    for (const [code, tamper] of cases) {
      const body = copy();
      tamper(body);
      const response = await send(body);
      expect([code, response.status]).toEqual([code, 422]);
      expect(response.body.error).toMatchObject({ code, message: expect.stringContaining("spec version") });
      expect(response.body.error.details[0].path).toMatch(/^body\./);
    }
    const after = await t.service.store.countRows();
    for (const table of ["runs", "conversations", "run_events", "idempotency_keys", "jobs"]) {
      expect([table, after[table]]).toEqual([table, before[table]]);
    }
  });

  it("answers a replay with the run it made, and refuses the key with another body", async () => {
    const first = await send(upload, "upload-replayed");
    expect(first.status).toBe(201);
    const again = await send(upload, "upload-replayed");
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.run_id).toBe(first.body.run_id);
    const other = copy();
    other.conversations.reverse();
    const reused = await send(other, "upload-replayed");
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    const missing = await p.client.post("/v1/runs/uploads", upload);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    await waitForRun(p.client, first.body.run_id);
  });

  it("needs runs:execute, and the spec and environment of the key's project", async () => {
    const reader = t.admin.withToken(await t.issueKey(p.projectId, ["runs:read"]));
    const denied = await reader.post("/v1/runs/uploads", upload, { headers: { "idempotency-key": "denied" } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("INSUFFICIENT_SCOPE");
    const other = await seedProject(t, agent.baseUrl);
    const elsewhere = await other.client.post("/v1/runs/uploads", upload, { headers: { "idempotency-key": "x" } });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error.code).toBe("NOT_FOUND");
  });

  describe("in a commit's release decision", () => {
    let commits = 0;
    let releases: ApiClient;
    beforeAll(async () => {
      releases = t.admin.withToken(await t.issueKey(p.projectId, ["releases:read", "releases:write", "runs:execute"]));
    });
    const nextSha = () => (++commits).toString(16).padStart(40, "e");
    const decide = async (executed_outside_service?: "allow" | "never") => {
      const commit_sha = nextSha();
      const response = await releases.post("/v1/release-decisions", {
        subject: { repository: "acme/refunds", commit_sha },
        plan: [{ test_spec_id: p.testSpecId, environment_id: p.environmentId, executor: "local" }],
        base: {
          commits: [{ sha: nextSha(), committed_at: "2026-11-20T10:00:00Z" }],
          ...(executed_outside_service ? { settings: { executed_outside_service } } : {}),
        },
      });
      expect(response.status).toBe(201);
      return { commit_sha, decision: response.body };
    };
    const decided = (decisionId: string) =>
      waitFor(async () => {
        const decision = (await releases.get(`/v1/release-decisions/${decisionId}`)).body;
        return decision.status === "PENDING" ? undefined : decision;
      }, "the decision");

    it("waits for an upload in a slot executed locally, which a run the service executes does not fill", async () => {
      const { commit_sha, decision } = await decide("allow");
      expect(decision).toMatchObject({
        status: "PENDING",
        planned: [{ executor: "local", run_id: null }],
        change_settings: { executed_outside_service: "allow" },
      });
      const serviceRun = await p.client.post(
        "/v1/runs",
        {
          test_spec_id: p.testSpecId,
          environment_id: p.environmentId,
          source: { repository: "acme/refunds", commit_sha },
        },
        { headers: { "idempotency-key": `service-${commit_sha}` } },
      );
      expect(serviceRun.status).toBe(201);
      await waitForRun(p.client, serviceRun.body.run_id);
      const still = (await releases.get(`/v1/release-decisions/${decision.decision_id}`)).body;
      expect(still).toMatchObject({ status: "PENDING", planned: [{ run_id: null }] });
      expect(still.runs).toEqual([
        expect.objectContaining({ run_id: serviceRun.body.run_id, executor: "service", planned: false }),
      ]);
    });

    it("refuses an uploaded run where the base policy is the default, saying why, and counts it where the base allows", async () => {
      for (const [policy, status] of [
        [undefined, "BLOCKED"],
        ["never", "BLOCKED"],
        ["allow", "ALLOWED"],
      ] as const) {
        const { commit_sha, decision } = await decide(policy);
        const uploaded = await send({ ...upload, source: { repository: "acme/refunds", commit_sha } });
        expect(uploaded.status).toBe(201);
        await waitForRun(p.client, uploaded.body.run_id);
        const judged = await decided(decision.decision_id);
        expect([policy, judged.status]).toEqual([policy, status]);
        expect(judged.runs).toEqual([
          expect.objectContaining({
            run_id: uploaded.body.run_id,
            executor: "local",
            uploaded_by: expect.any(String),
            planned: true,
          }),
        ]);
        // The check run's summary (and the Action's job summary) says where the run was executed, and why it does not count.
        const evidence = (await p.client.get(`/v1/runs/${uploaded.body.run_id}/evidence`)).body;
        const summary = renderDecisionSummary(
          {
            decision: judged,
            runs: [
              {
                evidence,
                specName: "refund-agent",
                specPath: null,
                lines: {},
                environmentName: "staging",
                unmet: [],
                failures: [],
                findings: [],
              },
            ],
            approval: null,
          },
          (ref) => `${t.baseUrl}${ref}`,
          { limit: 65_535 },
        );
        expect(summary).toContain(
          `Executed outside the service (executor: local), uploaded by \`${uploaded.body.uploaded_by}\`; judged by the service.`,
        );
        expect(summary.includes("| executor | failed |")).toBe(status === "BLOCKED");
        const page = await (await fetch(`${t.baseUrl}${judged.links.html}`)).text();
        expect(page).toContain(`executed outside the service, uploaded by ${uploaded.body.uploaded_by}`);
        const refusal = judged.reasons.find((r: { gate_id: string }) => r.gate_id === "executor");
        if (status === "BLOCKED") {
          expect(refusal).toMatchObject({ run_id: uploaded.body.run_id, status: "failed", blocking: true });
          expect(refusal.reason).toMatch(
            /executed outside the service .* does not count.*executed_outside_service: never/,
          );
          expect(judged.reasons.map((r: { gate_id: string }) => r.gate_id)).toEqual(["executor"]);
          const waived = await t.admin.post(`/v1/release-decisions/${decision.decision_id}/waivers`, {
            run_id: uploaded.body.run_id,
            gate_id: "executor",
            reason: "let it through",
          });
          expect(waived.status).toBe(422);
          expect(waived.body.error.code).toBe("NOT_WAIVABLE");
        } else {
          expect(refusal).toBeUndefined();
          expect(judged.reasons.map((r: { gate_id: string; status: string }) => [r.gate_id, r.status])).toEqual([
            ["DET", "passed"],
            ["TASK", "passed"],
            ["SEC", "passed"],
          ]);
        }
      }
    });
  });
});
