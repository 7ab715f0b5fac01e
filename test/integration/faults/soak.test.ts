import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient, type ApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { expectEachHeldOnce, expectGapFree, readConversations, readTrace, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedOverApi } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";

const RUNS = 50;
const KILLS = 3;
const TERMINAL = new Set(["COMPLETED", "INCONCLUSIVE", "FAILED"]);

/** A small seeded generator: the kill moments differ from seed to seed, and a failing seed can be replayed (SOAK_SEED). */
function seeded(seed: number) {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

describe("the soak: runs in flight while the service is killed -9 and restarted", () => {
  let dir: string;
  let env: Record<string, string>;
  let agent: ExampleAgent;
  let service: ChildService | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-soak-"));
    env = { ASSURE_DB: join(dir, "assure.db"), ASSURE_WORKERS: "4", ASSURE_WORKER_LEASE_MS: "1000" };
    agent = await startExampleAgent({ latencyMs: 300 });
  });
  afterAll(async () => {
    await service?.kill();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`takes ${RUNS} runs to their verdicts through ${KILLS} kills at random moments: each case held once, traces gap-free`, async () => {
    const seed = Number(process.env.SOAK_SEED ?? Date.now() % 1_000_000);
    const random = seeded(seed);
    const token = (await runCli(["keys", "create", "--admin"], env)).json().token as string;
    service = await spawnService(env);
    let client: ApiClient = makeApiClient(service.baseUrl, undefined, token);
    const fixture = await seedOverApi(client, { name: "soak", agentBaseUrl: agent.baseUrl, maxConcurrency: 16 });
    const body = {
      test_spec_id: await fixture.addSpec(deterministicSpecYaml({ repeat: 2, concurrency: 4 })),
      environment_id: fixture.environmentId,
    };

    // The verdict without kills: one run taken to its end first.
    const reference = await client.post("/v1/runs", body, { headers: { "idempotency-key": "soak-reference" } });
    const expected = await waitForRun(client, reference.body.run_id, 60_000);
    const planned = (await readConversations(client, reference.body.run_id)).filter(
      (c) => c.status === "completed",
    ).length;

    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      runIds.push((await client.post("/v1/runs", body, { headers: { "idempotency-key": `soak-${i}` } })).body.run_id);
    }

    for (let kill = 0; kill < KILLS; kill++) {
      await new Promise((resolve) => setTimeout(resolve, 300 + random() * 2_000));
      await service.kill();
      service = await spawnService(env);
      client = makeApiClient(service.baseUrl, undefined, token);
    }

    const ended = await waitFor(
      async () => {
        const statuses = await Promise.all(
          runIds.map(async (id) => (await client.get(`/v1/runs/${id}`)).body as { status: string; verdict: string }),
        );
        return statuses.every((run) => TERMINAL.has(run.status)) ? statuses : undefined;
      },
      `every run terminal (seed ${seed})`,
      { timeoutMs: 180_000, everyMs: 500 },
    );
    expect(ended.map((run) => [run.status, run.verdict])).toEqual(
      runIds.map(() => [expected.status, expected.verdict]),
    );
    let interrupted = 0;
    for (const id of runIds) {
      expectGapFree(await readTrace(client, id));
      interrupted += expectEachHeldOnce(await readConversations(client, id), planned).interrupted;
    }
    // The kills came while conversations were in flight (else this soak proved nothing).
    expect(interrupted).toBeGreaterThan(0);
  }, 300_000);
});
