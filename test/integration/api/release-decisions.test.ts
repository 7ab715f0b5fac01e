import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { waitForRun } from "../../helpers/runs.js";
import { PROJECT_SCOPES, deterministicSpecYaml, seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import type { ApiClient } from "../../helpers/api-client.js";

const REPOSITORY = "acme/refunds";
let shas = 0;
const nextSha = () => (++shas).toString(16).padStart(40, "0");

describe("release decisions", () => {
  let t: TestService;
  let clock: FakeClock;
  let agent: ExampleAgent;
  let p: SeededProject;
  let badEnvironmentId: string;
  let ci: ApiClient; // what a CI workflow holds: it may decide, never waive
  let reviewer: ApiClient;

  beforeAll(async () => {
    clock = new FakeClock();
    t = await startTestService({ clock, env: { ASSURE_WORKERS: "4" } });
    agent = await startExampleAgent();
    p = await seedProject(t, agent.baseUrl, { specYaml: deterministicSpecYaml({ repeat: 1 }) });
    badEnvironmentId = (
      await p.client.post("/v1/environments", {
        name: "sloppy",
        agent_id: p.agentId,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent+wrong-arguments" },
      })
    ).body.environment_id;
    ci = t.admin.withToken(await t.issueKey(p.projectId, [...PROJECT_SCOPES, "releases:read", "releases:write"]));
    reviewer = t.admin.withToken(await t.issueKey(p.projectId, ["releases:read", "releases:waive", "evidence:read"]));
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  const decide = (sha: string, plan: { test_spec_id: string; environment_id: string }[]) =>
    ci.post("/v1/release-decisions", { subject: { repository: REPOSITORY, commit_sha: sha }, plan });
  const runFor = async (sha: string, environment_id: string, key = `${sha}-${environment_id}`) => {
    const created = await ci.post(
      "/v1/runs",
      { test_spec_id: p.testSpecId, environment_id, source: { repository: REPOSITORY, commit_sha: sha } },
      { headers: { "idempotency-key": key } },
    );
    expect(created.status).toBe(201);
    return created.body.run_id as string;
  };
  const settled = (decisionId: string) =>
    waitFor(async () => {
      const decision = (await ci.get(`/v1/release-decisions/${decisionId}`)).body;
      return decision.status !== "PENDING" ? decision : undefined;
    }, `decision ${decisionId} to be decided`);

  it("waits for its planned run, then allows a commit whose gates passed, citing each gate's evidence", async () => {
    const sha = nextSha();
    const created = await decide(sha, [{ test_spec_id: p.testSpecId, environment_id: p.environmentId }]);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: "PENDING",
      attempt: 1,
      subject: { repository: REPOSITORY, commit_sha: sha },
      planned: [{ test_spec_id: p.testSpecId, environment_id: p.environmentId, run_id: null }],
      reasons: [
        { status: "pending", blocking: true, reason: "refund-agent-deterministic in staging: waiting for its run" },
      ],
    });
    expect((await decide(sha, [])).status).toBe(200); // one decision per commit: found, not made again

    const runId = await runFor(sha, p.environmentId);
    await waitForRun(ci, runId);
    const decision = await settled(created.body.decision_id);
    expect(decision).toMatchObject({
      status: "ALLOWED",
      planned: [{ run_id: runId }],
      runs: [{ run_id: runId, planned: true, attempt: 1 }],
    });
    expect(decision.decided_at).not.toBeNull();
    expect(decision.reasons).toEqual([
      expect.objectContaining({ run_id: runId, gate_id: "DET", status: "passed", blocking: false }),
    ]);
    for (const ref of decision.reasons[0].evidence_refs) expect((await p.client.get(ref)).status).toBe(200);

    const events = (await ci.get(`/v1/release-decisions/${decision.decision_id}/events`)).body.data;
    // Made (waiting for its run), the run created (waiting for it to end), the run ended.
    expect(events.map((e: { sequence: number; data: { status: string } }) => [e.sequence, e.data.status])).toEqual([
      [1, "PENDING"],
      [2, "PENDING"],
      [3, "ALLOWED"],
    ]);
    expect(events[2]).toMatchObject({
      schema_version: "1",
      type: "release_decision.updated",
      decision_id: decision.decision_id,
      run_id: runId,
    });
    expect(events[2].data).toMatchObject({ previous_status: "PENDING", attempt: 1, blocking: 0 });
  });

  it("blocks a failed gate until a reviewer waives it; a revocation blocks it again; a CI key cannot waive", async () => {
    const sha = nextSha();
    const runId = await runFor(sha, badEnvironmentId); // the run may come before the decision: it fills the plan
    await waitForRun(ci, runId);
    const decision = (await decide(sha, [{ test_spec_id: p.testSpecId, environment_id: badEnvironmentId }])).body;
    expect(decision).toMatchObject({
      status: "BLOCKED",
      reasons: [{ run_id: runId, gate_id: "DET", status: "failed", blocking: true, waiver_ref: null }],
    });

    // The run's evidence names the gate as the decision's reason and the waiver do: gate_id (its
    // deprecated id says the same, with Deprecation and Sunset headers).
    const evidence = await ci.get(`/v1/runs/${runId}/evidence`);
    const failedGate = evidence.body.gates.find((g: { status: string }) => g.status === "failed");
    expect(failedGate).toMatchObject({ gate_id: decision.reasons[0].gate_id, id: decision.reasons[0].gate_id });
    expect(evidence.headers.get("deprecation")).toBe(`@${Date.parse("2026-11-27T00:00:00Z") / 1000}`);
    expect(evidence.headers.get("sunset")).toBe(new Date("2027-06-01T00:00:00Z").toUTCString());

    const waiverBody = {
      run_id: runId,
      gate_id: failedGate.gate_id,
      reason: "Known issue ACME-12; the fix ships next week.",
    };
    const byCi = await ci.post(`/v1/release-decisions/${decision.decision_id}/waivers`, waiverBody);
    expect(byCi.status).toBe(403);
    expect(byCi.body.error.message).toContain("releases:waive");

    const waiver = await reviewer.post(`/v1/release-decisions/${decision.decision_id}/waivers`, waiverBody);
    expect(waiver.status).toBe(201);
    expect(waiver.body).toMatchObject({
      active: true,
      revokes: null,
      revoked_by: null,
      created_by: { key_id: expect.stringMatching(/^key_/) },
    });
    const waived = (await ci.get(`/v1/release-decisions/${decision.decision_id}`)).body;
    expect(waived).toMatchObject({
      status: "ALLOWED",
      reasons: [{ gate_id: "DET", status: "waived", blocking: false }],
    });
    expect(waived.reasons[0].waiver_ref).toBe(
      `/v1/release-decisions/${decision.decision_id}/waivers/${waiver.body.waiver_id}`,
    );
    expect((await reviewer.get(waived.reasons[0].waiver_ref)).body.waiver_id).toBe(waiver.body.waiver_id);

    const revoke = (reason: string) =>
      reviewer.post(`/v1/release-decisions/${decision.decision_id}/waivers/${waiver.body.waiver_id}/revocations`, {
        reason,
      });
    const revoked = await revoke("The fix slipped; block until it lands.");
    expect(revoked.status).toBe(201);
    expect(revoked.body).toMatchObject({ revokes: waiver.body.waiver_id, active: false });
    expect((await revoke("again")).status).toBe(409);
    expect((await ci.get(`/v1/release-decisions/${decision.decision_id}`)).body.status).toBe("BLOCKED");
    const waivers = (await reviewer.get(`/v1/release-decisions/${decision.decision_id}/waivers`)).body.data;
    expect(
      waivers.map((w: { waiver_id: string; active: boolean; revoked_by: string | null }) => [
        w.waiver_id,
        w.active,
        w.revoked_by,
      ]),
    ).toEqual([
      [waiver.body.waiver_id, false, revoked.body.waiver_id],
      [revoked.body.waiver_id, false, null],
    ]);
    const statuses = (await ci.get(`/v1/release-decisions/${decision.decision_id}/events`)).body.data.map(
      (e: { data: { status: string } }) => e.data.status,
    );
    expect(statuses).toEqual(["BLOCKED", "ALLOWED", "BLOCKED"]);
  });

  it("lets a waiver lapse when it expires: the decision blocks again then", async () => {
    const sha = nextSha();
    const runId = await runFor(sha, badEnvironmentId);
    await waitForRun(ci, runId);
    const decision = (await decide(sha, [{ test_spec_id: p.testSpecId, environment_id: badEnvironmentId }])).body;
    const expires_at = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const waiver = await reviewer.post(`/v1/release-decisions/${decision.decision_id}/waivers`, {
      run_id: runId,
      gate_id: "DET",
      reason: "for an hour",
      expires_at,
    });
    expect(waiver.body).toMatchObject({ active: true, expires_at });
    expect((await ci.get(`/v1/release-decisions/${decision.decision_id}`)).body.status).toBe("ALLOWED");

    clock.advance(3_600_001);
    await waitFor(
      async () => (await ci.get(`/v1/release-decisions/${decision.decision_id}`)).body.status === "BLOCKED",
      "the waiver to lapse",
    );
    expect(
      (await reviewer.get(`/v1/release-decisions/${decision.decision_id}/waivers/${waiver.body.waiver_id}`)).body
        .active,
    ).toBe(false);
  });

  it("never lets runs it did not plan decide: they are shown, and a decision with nothing planned blocks", async () => {
    const sha = nextSha();
    const good = await runFor(sha, p.environmentId);
    await waitForRun(ci, good);
    const decision = (await decide(sha, [])).body;
    expect(decision).toMatchObject({
      status: "BLOCKED",
      reasons: [{ status: "untested", reason: expect.stringMatching(/nothing was tested/) }],
    });
    expect(decision.runs).toEqual([expect.objectContaining({ run_id: good, planned: false, attempt: null })]);
  });

  it("starts a commit's runs again in a new attempt, which waits for new runs", async () => {
    const sha = nextSha();
    const first = await runFor(sha, p.environmentId);
    await waitForRun(ci, first);
    const decision = (await decide(sha, [{ test_spec_id: p.testSpecId, environment_id: p.environmentId }])).body;
    expect(decision.status).toBe("ALLOWED");
    const again = await ci.post(`/v1/release-decisions/${decision.decision_id}/attempts`, {});
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({
      attempt: 2,
      status: "PENDING",
      planned: [{ run_id: null }],
      runs: [{ run_id: first, planned: false, attempt: 1 }],
    });
    const second = await runFor(sha, p.environmentId, `${sha}-attempt-2`);
    await waitForRun(ci, second);
    expect(await settled(decision.decision_id)).toMatchObject({
      status: "ALLOWED",
      attempt: 2,
      planned: [{ run_id: second }],
    });
  });

  it("decides on a set of runs at once, and lists decisions by repository, commit and status", async () => {
    const sha = nextSha();
    const good = await runFor(sha, p.environmentId);
    const bad = await runFor(sha, badEnvironmentId);
    await waitForRun(ci, good);
    await waitForRun(ci, bad);
    const allowed = await ci.post("/v1/release-decisions", { subject: { run_ids: [good] } });
    expect(allowed.status).toBe(201);
    expect(allowed.body).toMatchObject({ status: "ALLOWED", subject: { run_ids: [good] } });
    const blocked = (await ci.post("/v1/release-decisions", { subject: { run_ids: [good, bad] } })).body;
    expect(blocked.status).toBe("BLOCKED");

    const listed = (await ci.get(`/v1/release-decisions?status=blocked&limit=200`)).body.data.map(
      (d: { decision_id: string }) => d.decision_id,
    );
    expect(listed).toContain(blocked.decision_id);
    expect(listed).not.toContain(allowed.body.decision_id);
    const decisionForSha = (await decide(sha, [])).body;
    expect(
      (await ci.get(`/v1/release-decisions?repository=${REPOSITORY}&commit_sha=${sha}`)).body.data.map(
        (d: { decision_id: string }) => d.decision_id,
      ),
    ).toEqual([decisionForSha.decision_id]);
  });

  it("refuses what does not hold together, with the field named, and changes nothing", async () => {
    const other = await t.admin.post("/v1/projects", { name: "other-project" });
    const otherKey = t.admin.withToken(
      await t.issueKey(other.body.project_id, ["releases:write", "releases:read", "releases:waive"]),
    );
    const before = await t.service.store.countRows();
    // What the decision names that its project does not have is not found (as another project's resources are).
    const cases: [ApiClient, string, unknown, string, number][] = [
      [
        otherKey,
        "/v1/release-decisions",
        {
          subject: { repository: REPOSITORY, commit_sha: nextSha() },
          plan: [{ test_spec_id: p.testSpecId, environment_id: p.environmentId }],
        },
        "body.plan[0].test_spec_id",
        404,
      ],
      [
        ci,
        "/v1/release-decisions",
        {
          subject: { repository: REPOSITORY, commit_sha: nextSha() },
          plan: [{ test_spec_id: p.testSpecId, environment_id: "env_nope" }],
        },
        "body.plan[0].environment_id",
        404,
      ],
      [otherKey, "/v1/release-decisions", { subject: { run_ids: ["run_nope"] } }, "body.subject.run_ids[0]", 404],
      [ci, "/v1/release-decisions", { subject: { repository: "not a repo", commit_sha: "x" } }, "body.subject", 400],
    ];
    for (const [client, path, body, field, status] of cases) {
      const refused = await client.post(path, body);
      expect(refused.status).toBe(status);
      expect(JSON.stringify(refused.body.error.details)).toContain(field);
    }
    expect(await t.service.store.countRows()).toEqual(before);

    const sha = nextSha();
    const runId = await runFor(sha, p.environmentId);
    await waitForRun(ci, runId);
    const decision = (await decide(sha, [{ test_spec_id: p.testSpecId, environment_id: p.environmentId }])).body;
    const waive = (body: unknown) => reviewer.post(`/v1/release-decisions/${decision.decision_id}/waivers`, body);
    // A waiver with nothing to lift is well-formed but cannot apply: 422 NOT_WAIVABLE, naming the field.
    const notWaivable = [
      [{ run_id: runId, gate_id: "DET", reason: "nothing to lift" }, "body.gate_id"],
      [{ run_id: "run_nope", gate_id: "DET", reason: "x" }, "body.run_id"],
    ] as const;
    for (const [body, field] of notWaivable) {
      const refused = await waive(body);
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatchObject({ code: "NOT_WAIVABLE", details: [{ path: field }] });
    }
    const expired = await waive({ run_id: runId, gate_id: "DET", reason: "x", expires_at: "2020-01-01T00:00:00Z" });
    expect(expired.status).toBe(422);
    expect(expired.body.error.code).toBe("NOT_WAIVABLE");
    expect((await otherKey.get(`/v1/release-decisions/${decision.decision_id}`)).status).toBe(404);
  });
});
