import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import type { Deprecation } from "../../../server/contract/index.js";
import { EVALUATORS } from "../../../server/evaluate/evaluators/index.js";
import type { Evaluator } from "../../../server/evaluate/evaluator.js";
import type { LoggedEvent } from "../../../server/store/index.js";
import { makeApiClient, type ApiClient } from "../../helpers/api-client.js";
import { makeResponseValidator } from "../../helpers/openapi.js";
import { readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const DEPRECATIONS: Deprecation[] = [
  { operation: "getProject", since: "2026-11-23", sunset: "2027-06-01", instead: "GET /v1/projects?project_id=" },
  { field: "Run.agent_version", since: "2026-12-01", sunset: "2027-07-01", instead: "GET /v1/agents/{agent_id}" },
];

describe("deprecations, declared once in the contract", () => {
  let t: TestService;
  let document: {
    paths: Record<string, Record<string, { deprecated?: boolean }>>;
    components: { schemas: Record<string, any> };
  };
  beforeAll(async () => {
    t = await startTestService({ deprecations: DEPRECATIONS });
    document = (await t.anonymous.get("/v1/openapi.json")).body;
  });
  afterAll(() => t.close());

  it("are marked deprecated in the OpenAPI document", () => {
    expect(document.paths["/v1/projects/{project_id}"]!.get!.deprecated).toBe(true);
    expect(document.paths["/v1/projects"]!.get!.deprecated).toBeUndefined();
    expect(document.components.schemas.Run.properties.agent_version.deprecated).toBe(true);
  });

  it("put Deprecation (RFC 9745) and Sunset (RFC 8594) headers on every response of an operation that uses them", async () => {
    const project = (await t.admin.post("/v1/projects", { name: "deprecations" })).body;
    for (const response of [
      await t.admin.get(`/v1/projects/${project.project_id}`),
      await t.admin.get("/v1/projects/prj_missing"),
    ]) {
      expect(response.headers.get("deprecation")).toBe(`@${Date.parse("2026-11-23T00:00:00Z") / 1000}`);
      expect(response.headers.get("sunset")).toBe("Tue, 01 Jun 2027 00:00:00 GMT");
    }
    // Run.agent_version is in every run a response carries: the list, one run, a run created.
    const runs = await t.admin.get("/v1/runs");
    expect(runs.headers.get("sunset")).toBe("Thu, 01 Jul 2027 00:00:00 GMT");
    expect(runs.headers.get("deprecation")).toBe(`@${Date.parse("2026-12-01T00:00:00Z") / 1000}`);
    expect((await t.admin.get("/v1/runs/run_missing")).headers.get("sunset")).toBe("Thu, 01 Jul 2027 00:00:00 GMT");
    for (const untouched of [await t.admin.get("/v1/projects"), await t.admin.get("/v1/agents")]) {
      expect(untouched.headers.get("deprecation")).toBeNull();
      expect(untouched.headers.get("sunset")).toBeNull();
    }
  });

  it("leave a request no route takes as it was: 404 or 405, without the headers", async () => {
    const unknown = await t.admin.get("/v1/nothing-here");
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "NOT_FOUND"]);
    expect(unknown.headers.get("deprecation")).toBeNull();
    const wrongMethod = await t.admin.call("DELETE", "/v1/projects");
    expect([wrongMethod.status, wrongMethod.body.error.code]).toEqual([405, "METHOD_NOT_ALLOWED"]);
  });

  it("must name something that exists: the service does not start otherwise", async () => {
    await expect(
      startTestService({
        deprecations: [{ operation: "listWidgets", since: "2026-11-23", sunset: "2027-06-01", instead: "x" }],
      }),
    ).rejects.toThrow(/operation 'listWidgets', which does not exist/);
    await expect(
      startTestService({
        deprecations: [{ field: "Run.colour", since: "2026-11-23", sunset: "2027-06-01", instead: "x" }],
      }),
    ).rejects.toThrow(/field 'Run.colour'/);
  });
});

/** A metric family a later version might add: how long the agent's replies are. */
const replyLength: Evaluator = {
  kind: "metric",
  evaluate: async ({ conversations }) => {
    const all = [];
    for await (const held of conversations.all()) all.push(held);
    return {
      findings: [],
      evaluations: all.map((held) => {
        const characters = held.facts.replies.reduce((n, reply) => n + (reply.content?.length ?? 0), 0);
        return {
          kind: "metric",
          metric_id: "reply_length",
          scope: "conversation",
          scenario_id: held.conversation.scenario_id,
          conversation_id: held.conversation.conversation_id,
          turn: null,
          spec_path: null,
          score: Math.min(1, characters / 1000),
          threshold: 0,
          status: "passed",
          judge: { provider: "assure", model: "reply-length@1" },
          reason: `${characters} characters`,
          evidence_refs: [held.ref.conversation()],
        };
      }),
    };
  },
};

const KNOWN_EVENT_TYPES = new Set([
  "run.status_changed",
  "message.sent",
  "message.received",
  "tool.called",
  "tool.returned",
  "evaluation.completed",
]);

/**
 * A v1 consumer that knows the expectations' metrics and these event types, and checks every
 * response against the v1 document as it was committed: what it reads of a run.
 */
async function readAsV1Consumer(client: ApiClient, runId: string) {
  const known = (metricId: string) => metricId.startsWith("expect.") || metricId.startsWith("detector.");
  const evidence = (await client.get(`/v1/runs/${runId}/evidence`)).body;
  const evaluations = (await client.get(`/v1/runs/${runId}/evaluations?limit=200`)).body.data as Record<string, any>[];
  const trace = (await readTrace(client, runId)).filter(
    (event) =>
      KNOWN_EVENT_TYPES.has(event.type) && (event.type !== "evaluation.completed" || known(event.data.metric_id)),
  );
  return {
    verdict: evidence.verdict,
    gates: evidence.gates.map((g: Record<string, unknown>) => [g.id, g.status, g.reason]),
    evaluations: evaluations
      .filter((e) => known(e.metric_id))
      .map((e) => [e.metric_id, e.spec_path, e.status, e.score, e.reason]),
    trace: trace.map((event) => [
      event.type,
      event.data.to ?? event.data.name ?? event.data.content ?? event.data.metric_id ?? null,
    ]),
  };
}

describe("additive evolution (spec §9)", () => {
  let agent: ExampleAgent;
  beforeAll(async () => {
    agent = await startExampleAgent();
  });
  afterAll(() => agent.close());

  async function runOn(t: TestService) {
    const p = await seedProject(t, agent.baseUrl, { specYaml: deterministicSpecYaml({ repeat: 1 }) });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    await waitForRun(p.client, run_id);
    const committed = makeResponseValidator(
      JSON.parse(readFileSync(new URL("../../../docs/openapi-v1.json", import.meta.url), "utf8")),
    );
    return { runId: run_id, consumer: makeApiClient(t.baseUrl, committed, p.token) };
  }

  it("leaves a consumer that reads only the metrics and event types it knows unaffected by new ones", async () => {
    const today = await startTestService({ env: { ASSURE_WORKERS: "1" } });
    const later = await startTestService({ env: { ASSURE_WORKERS: "1" }, evaluators: [...EVALUATORS, replyLength] });
    try {
      const before = await runOn(today);
      const after = await runOn(later);
      // The later version also records an event type that v1 consumers have never seen.
      await later.withStore(async (store) => {
        const next = (await store.getLastSequence(after.runId)) + 1;
        const unseen = { type: "agent.thought", data: { text: "thinking" } } as unknown as Pick<
          LoggedEvent,
          "type" | "data"
        >;
        await store.appendEvents(after.runId, [
          {
            ...unseen,
            sequence: next,
            event_id: "evt_new",
            occurred_at: new Date().toISOString(),
            conversation_id: null,
            turn: null,
          } as LoggedEvent,
        ]);
      });

      const allEvaluations = (await after.consumer.get(`/v1/runs/${after.runId}/evaluations?limit=200`)).body.data;
      expect(allEvaluations.some((e: { metric_id: string }) => e.metric_id === "reply_length")).toBe(true);
      expect((await readTrace(after.consumer, after.runId)).at(-1)!.type).toBe("agent.thought");
      expect(await readAsV1Consumer(after.consumer, after.runId)).toEqual(
        await readAsV1Consumer(before.consumer, before.runId),
      );
    } finally {
      await today.close();
      await later.close();
    }
  });
});
