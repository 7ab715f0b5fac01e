import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { readyStatus, startLoadBalancer, type LoadBalancer } from "../../helpers/load-balancer.js";
import { createScratchDatabase, type ScratchDatabase } from "../../helpers/postgres.js";
import { waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedOverApi } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";

const NODES = 3;
const TERMINAL = new Set(["COMPLETED", "INCONCLUSIVE", "FAILED"]);
/**
 * Twenty of the balancer's health checks: room for checks slow on a loaded machine. Set to 0, it
 * shows what the delay is for: requests are lost (sent on a connection the node closes as it stops).
 */
const SHUTDOWN_DELAY_MS = process.env.ASSURE_TEST_SHUTDOWN_DELAY_MS ?? "2000";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  request: string;
  status?: number;
  error?: string;
}

/** Three nodes on one PostgreSQL database behind a load balancer, SIGTERMed and started again one after another. */
describe("a rolling restart", () => {
  let database: ScratchDatabase | undefined;
  let agent: ExampleAgent;
  let nodes: ChildService[] = [];
  let balancer: LoadBalancer | undefined;

  beforeAll(async () => {
    agent = await startExampleAgent({ latencyMs: 10 });
  });
  afterAll(async () => {
    await balancer?.close();
    await Promise.all(nodes.map(async (node) => node.kill()));
    await database?.drop();
    await agent.close();
  });

  it("keeps /readyz 200 on the nodes not restarting and answers every request sent through the balancer 2xx; runs created meanwhile reach the reference's verdict", async () => {
    database = await createScratchDatabase();
    const env = {
      ASSURE_DATABASE_URL: database.url,
      ASSURE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      ASSURE_WORKERS: "2",
      ASSURE_MAX_RUNS_PER_PROJECT: String(2 * NODES),
      ASSURE_DATABASE_POOL_SIZE: "4",
      ASSURE_SHUTDOWN_DELAY_MS: SHUTDOWN_DELAY_MS,
    };
    // Started together: they migrate the empty database once, under its lock.
    nodes = await Promise.all(Array.from({ length: NODES }, () => spawnService(env)));
    const token = (await runCli(["keys", "create", "--admin"], env)).json().token as string;
    balancer = await startLoadBalancer(nodes.map((node) => node.baseUrl));
    const lb = balancer;
    await waitFor(() => lb.ready.every(Boolean), "the balancer to find every node ready", { timeoutMs: 30_000 });
    const client = makeApiClient(lb.baseUrl, undefined, token);
    const fixture = await seedOverApi(client, { name: "rolling", agentBaseUrl: agent.baseUrl, maxConcurrency: 16 });
    const body = {
      test_spec_id: await fixture.addSpec(deterministicSpecYaml({ repeat: 1 })),
      environment_id: fixture.environmentId,
    };
    const reference = await client.post("/v1/runs", body, { headers: { "idempotency-key": "reference" } });
    const expected = await waitForRun(client, reference.body.run_id as string, 60_000);

    // A steady stream through the balancer: reads, and run creations.
    let streaming = true;
    let sent = 0;
    const outcomes: Outcome[] = [];
    const created: string[] = [];
    const send = async (request: string, init: RequestInit = {}) => {
      sent++;
      const [method, path] = request.split(" ");
      try {
        const response = await fetch(`${lb.baseUrl}${path}`, {
          ...init,
          method,
          headers: { authorization: `Bearer ${token}`, ...init.headers },
        });
        const text = await response.text();
        outcomes.push({ request, status: response.status, ...(response.ok ? {} : { error: text }) });
        return response.ok ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      } catch (error) {
        outcomes.push({ request, error: String(error) });
        return undefined;
      }
    };
    const readers = Array.from({ length: 4 }, async (_, i) => {
      while (streaming) {
        await send(i % 2 ? `GET /v1/runs/${reference.body.run_id}` : `GET /v1/projects/${fixture.projectId}`);
        await pause(10);
      }
    });
    const creator = (async () => {
      for (let i = 0; streaming; i++) {
        const run = await send("POST /v1/runs", {
          body: JSON.stringify(body),
          headers: { "content-type": "application/json", "idempotency-key": `rolling-${i}` },
        });
        if (run) created.push(run.run_id as string);
        await pause(150);
      }
    })();

    // /readyz of every node but the one restarting, straight from the node.
    let restarting: number | undefined;
    const notReady: string[] = [];
    const watchers = nodes.map(async (_, index) => {
      while (streaming) {
        const during = restarting;
        const status = await readyStatus(nodes[index]!.baseUrl, 30_000);
        if (status !== 200 && during !== index && restarting !== index) notReady.push(`node ${index}: ${status}`);
        await pause(20);
      }
    });

    const answeredWhileRestarting: number[] = [];
    for (let index = 0; index < NODES; index++) {
      restarting = index;
      const before = outcomes.length;
      const port = new URL(nodes[index]!.baseUrl).port;
      expect(await nodes[index]!.stop()).toBe(0);
      nodes[index] = await spawnService({ ...env, PORT: port });
      const served = lb.answered[index]!;
      await waitFor(
        () => lb.ready[index] && lb.answered[index]! > served,
        `the balancer to send node ${index} requests again`,
        {
          timeoutMs: 30_000,
        },
      );
      answeredWhileRestarting.push(outcomes.length - before);
      restarting = undefined;
    }
    streaming = false;
    await Promise.all([...readers, creator, ...watchers]);

    expect(outcomes.filter((outcome) => outcome.status === undefined || outcome.status >= 300)).toEqual([]);
    expect(outcomes).toHaveLength(sent);
    for (const answered of answeredWhileRestarting) expect(answered).toBeGreaterThan(0);
    expect(notReady).toEqual([]);
    // Each node was out of the balancer's rotation before it stopped accepting: none refused a connection meanwhile.
    expect(lb.refused).toEqual(nodes.map(() => 0));

    const ended = await waitFor(
      async () => {
        const runs = await Promise.all(
          created.map(async (id) => (await client.get(`/v1/runs/${id}`)).body as { status: string; verdict: string }),
        );
        return runs.every((run) => TERMINAL.has(run.status)) ? runs : undefined;
      },
      "every run created during the restart to end",
      { timeoutMs: 60_000, everyMs: 250 },
    );
    expect(created.length).toBeGreaterThan(0);
    expect(ended.map((run) => [run.status, run.verdict])).toEqual(
      created.map(() => [expected.status, expected.verdict]),
    );
  }, 180_000);
});
