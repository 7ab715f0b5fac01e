import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import {
  expectAllRefsResolve,
  expectConversationsInOrder,
  expectEachHeldOnce,
  expectGapFree,
  readConversations,
  readTrace,
  startRun,
  waitForRun,
} from "../../helpers/runs.js";
import { deterministicSpecYaml, seedOverApi } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";
import { systemClock } from "../../../server/clock.js";
import { openStore } from "../../../server/store/index.js";

/** Each test starts the service (twice, some) and waits for runs: minutes on a loaded machine, not seconds. */
const SLOW_TEST_MS = 240_000;

describe("a run and the service stopping", () => {
  let dir: string;
  let env: Record<string, string>;
  let agent: ExampleAgent;
  let service: ChildService | undefined;
  let token: string;

  // Each test starts the service if the one before left it stopped, and seeds its own project: none
  // depends on what another did.
  const running = async () => (service ??= await spawnService(env));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-crash-"));
    env = { ASSURE_DB: join(dir, "assure.db"), ASSURE_WORKERS: "2", ASSURE_WORKER_LEASE_MS: "1000" };
    agent = await startExampleAgent({ slowMs: 120, latencyMs: 150 });
    token = (await runCli(["keys", "create", "--admin"], env)).json().token;
  });
  afterAll(async () => {
    await service?.kill();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "survives kill -9 with 64 conversations in flight: the completed are kept, the cut ones held again, none twice",
    async () => {
      let client = makeApiClient((await running()).baseUrl, undefined, token);
      const seeded = await seedOverApi(client, { name: "crash", agentBaseUrl: agent.baseUrl, maxConcurrency: 64 });
      const { run_id } = await startRun(client, {
        test_spec_id: await seeded.addSpec(deterministicSpecYaml({ repeat: 100, concurrency: 64 })),
        environment_id: seeded.environmentId,
      });

      // Wait until some conversations are done and calls are in flight, then kill the service without
      // warning. On a loaded machine the run may go slower, never faster: the wait is long, and does
      // not need all 64 calls in flight at the moment it looks.
      await waitFor(
        async () => {
          const conversations = (await client.get(`/v1/runs/${run_id}/conversations?limit=200`)).body.data as {
            status: string;
          }[];
          return conversations.filter((c) => c.status === "completed").length >= 40 && agent.inFlight >= 16;
        },
        "the run to be well under way",
        { everyMs: 5, timeoutMs: 120_000 },
      );
      await service!.kill();
      const beforeRestart = agent.requests;

      service = await spawnService(env);
      client = makeApiClient(service.baseUrl, undefined, token);
      const run = await waitForRun(client, run_id, 60_000);
      expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
      expect(agent.requests).toBeGreaterThan(beforeRestart);

      const trace = await readTrace(client, run_id);
      expectGapFree(trace);
      expectConversationsInOrder(trace);
      // Every planned conversation completed once; the ones cut off are kept, marked interrupted.
      const { interrupted } = expectEachHeldOnce(await readConversations(client, run_id), 200);
      expect(interrupted).toBeGreaterThan(0);
      expect(trace.find((e) => e.type === "run.resumed")?.data).toMatchObject({
        interrupted_conversations: interrupted,
      });
      await expectAllRefsResolve(client, run_id);
    },
    SLOW_TEST_MS,
  );

  it(
    "finishes the runs in hand on SIGTERM before it exits",
    async () => {
      const client = makeApiClient((await running()).baseUrl, undefined, token);
      const seeded = await seedOverApi(client, { name: "finish", agentBaseUrl: agent.baseUrl });
      const { run_id } = await startRun(client, {
        test_spec_id: await seeded.addSpec(deterministicSpecYaml({ repeat: 2 })),
        environment_id: seeded.environmentId,
      });
      await waitFor(
        async () =>
          (await client.get(`/v1/runs/${run_id}/trace?limit=200`)).body.data.some(
            (e: { type: string }) => e.type === "message.received",
          ),
        "the run to be in hand",
        { timeoutMs: 60_000 },
      );
      expect((await client.get(`/v1/runs/${run_id}`)).body.status).toBe("RUNNING");

      expect(await service!.stop()).toBe(0);
      service = undefined;
      const store = await openStore(env.ASSURE_DB!, { clock: systemClock });
      try {
        expect(await store.getRun(run_id)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
        expect(await store.sql.prepare("SELECT COUNT(*) AS n FROM jobs WHERE state = 'running'").pluck().get()).toBe(0); // no lease left held
      } finally {
        await store.close();
      }
    },
    SLOW_TEST_MS,
  );

  it(
    "on SIGTERM hands back a run that cannot finish in the grace, closes by itself and exits 0, and the next start resumes it",
    async () => {
      let client = makeApiClient((await running()).baseUrl, undefined, token);
      const seeded = await seedOverApi(client, { name: "sigterm", agentBaseUrl: agent.baseUrl });
      const { run_id } = await startRun(client, {
        test_spec_id: await seeded.addSpec(deterministicSpecYaml({ repeat: 60, concurrency: 2 })),
        environment_id: seeded.environmentId,
      });
      await waitFor(
        async () =>
          (await client.get(`/v1/runs/${run_id}/trace?limit=200`)).body.data.some(
            (e: { type: string }) => e.type === "message.received",
          ),
        "the run to be in hand",
        { timeoutMs: 60_000 },
      );
      expect((await fetch(`${service!.baseUrl}/readyz`)).status).toBe(200);

      const stopping = service!;
      expect(await stopping.stop()).toBe(0);
      // It closed by itself after the grace, handing the run back: not the last-resort exit at 9.5 s.
      expect(stopping.logs.join("\n")).not.toContain("Still not closed");
      service = undefined;
      const store = await openStore(env.ASSURE_DB!, { clock: systemClock });
      try {
        expect((await store.getRun(run_id))!.status).toBe("RUNNING"); // not finished: handed back
        expect(await store.sql.prepare("SELECT COUNT(*) AS n FROM jobs WHERE state = 'running'").pluck().get()).toBe(0);
      } finally {
        await store.close();
      }

      service = await spawnService(env);
      client = makeApiClient(service.baseUrl, undefined, token);
      expect(await waitForRun(client, run_id, 60_000)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
      const trace = await readTrace(client, run_id);
      expectGapFree(trace);
      expectEachHeldOnce(await readConversations(client, run_id), 120);
    },
    SLOW_TEST_MS,
  );
});
