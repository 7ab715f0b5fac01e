import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient, type ApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { createScratchDatabase, type ScratchDatabase } from "../../helpers/postgres.js";
import { expectEachHeldOnce, expectGapFree, readConversations, readTrace, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedOverApi } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";

const NODES = 3;
const TERMINAL = new Set(["COMPLETED", "INCONCLUSIVE", "FAILED"]);

/** Three service processes on one PostgreSQL database, as behind a load balancer. */
describe("several nodes on one PostgreSQL database", () => {
  let database: ScratchDatabase;
  let env: Record<string, string>;
  let agent: ExampleAgent;
  let nodes: (ChildService | undefined)[] = [];
  let token: string;

  beforeAll(async () => {
    agent = await startExampleAgent({ latencyMs: 200 });
  });
  afterAll(async () => {
    await agent.close();
  });
  afterEach(async () => {
    await Promise.all(nodes.map(async (node) => node?.kill()));
    nodes = [];
    await database.drop();
  });

  async function startNodes(workers: number, settings: Record<string, string> = {}): Promise<ApiClient[]> {
    database = await createScratchDatabase();
    env = {
      ASSURE_DATABASE_URL: database.url,
      ASSURE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      ASSURE_WORKERS: String(workers),
      ASSURE_WORKER_LEASE_MS: "1000",
      ASSURE_DATABASE_POOL_SIZE: "4",
      ...settings,
    };
    // Started together: they migrate the empty database once, under its lock.
    nodes = await Promise.all(Array.from({ length: NODES }, () => spawnService(env)));
    token = (await runCli(["keys", "create", "--admin"], env)).json().token as string;
    return nodes.map((node) => makeApiClient(node!.baseUrl, undefined, token));
  }

  it("answers 20 identical run creations spread over three nodes with one run: 201 once, 200 with the same run to the others", async () => {
    const clients = await startNodes(0);
    const fixture = await seedOverApi(clients[0]!, { name: "nodes", agentBaseUrl: agent.baseUrl });
    const body = {
      test_spec_id: await fixture.addSpec(deterministicSpecYaml({ repeat: 1 })),
      environment_id: fixture.environmentId,
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        clients[i % NODES]!.post("/v1/runs", body, { headers: { "idempotency-key": "one-run" } }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array<number>(19).fill(200), 201]);
    expect(new Set(answers.map((answer) => answer.body.run_id)).size).toBe(1);
    expect((await clients[2]!.get(`/v1/runs?project_id=${fixture.projectId}`)).body.data).toHaveLength(1);
  });

  it("takes runs in flight to the verdicts they have without kills when one of three nodes is killed -9: each case held once, traces gap-free", async () => {
    // A project's runs at once, across the cluster: one per worker, so every node has some in hand.
    const clients = await startNodes(2, { ASSURE_MAX_RUNS_PER_PROJECT: String(2 * NODES) });
    const fixture = await seedOverApi(clients[0]!, { name: "kill", agentBaseUrl: agent.baseUrl, maxConcurrency: 16 });
    const body = {
      test_spec_id: await fixture.addSpec(deterministicSpecYaml({ repeat: 2, concurrency: 4 })),
      environment_id: fixture.environmentId,
    };
    const reference = await clients[0]!.post("/v1/runs", body, { headers: { "idempotency-key": "reference" } });
    const expected = await waitForRun(clients[0]!, reference.body.run_id, 60_000);
    const planned = (await readConversations(clients[0]!, reference.body.run_id)).filter(
      (c) => c.status === "completed",
    ).length;

    const runIds: string[] = [];
    for (let i = 0; i < 30; i++) {
      const created = await clients[i % NODES]!.post("/v1/runs", body, { headers: { "idempotency-key": `run-${i}` } });
      runIds.push(created.body.run_id as string);
    }
    // Once the victim has a run in hand (its log says it started one it has not moved on), it dies without a word;
    // the others take its runs after the lease.
    const victim = nodes[1]!;
    const inHand = () =>
      runIds.filter(
        (id) =>
          victim.logs.some((line) => line.includes(`Run ${id}: QUEUED → RUNNING`)) &&
          !victim.logs.some((line) => line.includes(`Run ${id}: RUNNING → `)),
      );
    await waitFor(() => inHand().length > 0, "the victim to have a run in hand", { timeoutMs: 120_000, everyMs: 20 });
    await nodes[1]!.kill();
    nodes[1] = undefined;
    const survivor = clients[0]!;

    const ended = await waitFor(
      async () => {
        const runs = await Promise.all(
          runIds.map(async (id) => (await survivor.get(`/v1/runs/${id}`)).body as { status: string; verdict: string }),
        );
        return runs.every((run) => TERMINAL.has(run.status)) ? runs : undefined;
      },
      "every run terminal",
      { timeoutMs: 180_000, everyMs: 500 },
    );
    expect(ended.map((run) => [run.status, run.verdict])).toEqual(
      runIds.map(() => [expected.status, expected.verdict]),
    );
    let resumed = 0;
    for (const id of runIds) {
      const trace = await readTrace(survivor, id);
      expectGapFree(trace);
      expectEachHeldOnce(await readConversations(survivor, id), planned);
      if (trace.some((event) => event.type === "run.resumed")) resumed++;
    }
    // Another node took over what the victim had in hand (else this proved nothing).
    expect(resumed).toBeGreaterThan(0);
  }, 300_000);
});
