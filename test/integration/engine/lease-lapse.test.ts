import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { readBody, startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeExecuteRun } from "../../../server/engine/tasks/execute-run.js";
import { makeLlmJudge } from "../../../server/evaluate/judges/llm-judge.js";
import { makeIdGenerator } from "../../../server/ids.js";
import { createLogger } from "../../../server/log.js";
import { makeEgressPolicy } from "../../../server/net/egress.js";
import { openStore, type ClaimedJob, type Store } from "../../../server/store/index.js";
import { openPostgresStore } from "../../../server/store/open-postgres-store.js";
import { serviceStoreOf, type ServiceStore } from "../../../server/store/service-store.js";
import type { WriteCommand } from "../../../server/store/writer/commands.js";
import { makeSameThreadWriter } from "../../../server/store/writer/same-thread-writer.js";
import { asyncListener } from "../../helpers/async-listener.js";
import { startJudgeServer } from "../../helpers/judge-server.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import {
  expectEachHeldOnce,
  expectGapFree,
  readConversations,
  readTrace,
  startRun,
  waitForRun,
} from "../../helpers/runs.js";
import { EXAMPLE_SPEC_YAML, deterministicSpecYaml, seedOverApi } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

const LEASE_MS = 30_000;

/** An endpoint (an agent, a judge) behind a door the test opens: while it is shut, its calls wait. */
async function startDoor(baseUrl: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let waiting = 0;
  const target = new URL(baseUrl).origin;
  const server = createServer(
    asyncListener(async (req, res) => {
      const body = await readBody(req);
      if (req.method === "POST") {
        waiting++;
        await opened;
        waiting--;
      }
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers: { "content-type": "application/json" },
        ...(req.method === "POST" ? { body } : {}),
      });
      res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get waiting() {
      return waiting;
    },
    open,
    /** Opens the door (the calls waiting behind it go through), then closes the server. */
    close() {
      open();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A node's store whose writes of run events are held until released (with every write after
 * them, in order): the node has read where the run's log ends, and not yet written to it.
 */
function holdingAppends(store: ServiceStore) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding = false;
  const gate =
    <W extends (...commands: WriteCommand[]) => Promise<unknown>>(write: W) =>
    (...commands: WriteCommand[]) => {
      holding ||= commands.some(([name]) => name === "appendEvents");
      return holding ? released.then(() => write(...commands)) : write(...commands);
    };
  return {
    store: {
      ...store,
      write: gate(store.write) as ServiceStore["write"],
      writeLazily: gate(store.writeLazily) as ServiceStore["writeLazily"],
    },
    get holding() {
      return holding;
    },
    release,
  };
}

describe("a run whose job's lease lapses while its worker still works", () => {
  const clock = new FakeClock();
  let t: TestService;
  let agent: ExampleAgent;
  let door: Awaited<ReturnType<typeof startDoor>>;
  let judge: Awaited<ReturnType<typeof startJudgeServer>>;
  const stores: ServiceStore[] = [];

  /** A node's own store on the service's database (SQLite or PostgreSQL), writing through a group commit of its own. */
  async function openNode(): Promise<ServiceStore> {
    const env = t.databaseEnv;
    const store: Store = env.ASSURE_DATABASE_URL
      ? await openPostgresStore(env.ASSURE_DATABASE_URL, {
          clock,
          encryptionKey: Buffer.from(env.ASSURE_ENCRYPTION_KEY!, "base64"),
          maxConnections: 4,
        })
      : await openStore(t.dbPath, { clock });
    const writer = makeSameThreadWriter(store);
    const node = serviceStoreOf(store, writer, async () => {
      await writer.close();
      await store.close();
    });
    stores.push(node);
    return node;
  }

  const egress = makeEgressPolicy({ allowlist: ["127.0.0.1"] });
  const judgeAt = (baseUrl: string) =>
    makeLlmJudge({ egress, baseUrl, model: "judge-model-1", apiKey: "judge-key", backoffMs: () => 10 });
  const executeRunOn = (store: ServiceStore, judgeUrl?: string) =>
    makeExecuteRun({
      store,
      clock,
      newId: makeIdGenerator(clock),
      egress,
      log: createLogger({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
      agentBackoffMs: () => 10,
      ...(judgeUrl ? { judge: judgeAt(judgeUrl) } : {}),
    });
  const executeOnce = async (store: ServiceStore, worker: string, judgeUrl?: string) => {
    const job = await claim(store, worker);
    return { job, done: executeRunOn(store, judgeUrl)(job.payload, { job, signal: new AbortController().signal }) };
  };
  /** Each evaluation of the run by what it evaluated and how it came out (not by its id or time). */
  async function outcomesOf(runId: string) {
    const outcomes: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: Record<string, string | null>[]; next_cursor: string | null } } = await t.admin.get(
        `/v1/runs/${runId}/evaluations?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      for (const e of page.body.data) outcomes.push(`${e.kind} ${e.metric_id} ${e.scenario_id} ${e.status}`);
      cursor = page.body.next_cursor;
    } while (cursor);
    return outcomes.sort();
  }
  const at = (ms = 0) => new Date(clock.now().getTime() + ms).toISOString();
  const claim = async (store: ServiceStore, worker: string) => {
    const [claimed] = await store.write(["claimJobs", worker, at(), at(LEASE_MS), 1]);
    expect(claimed).toHaveLength(1);
    return claimed[0]! as ClaimedJob;
  };

  beforeAll(async () => {
    t = await startTestService({ clock });
    agent = await startExampleAgent({ slowMs: 50 });
    door = await startDoor(agent.baseUrl);
    judge = await startJudgeServer();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await door?.close();
    await judge?.close();
    await agent?.close();
    await t?.close();
  });

  it("leaves the run to the worker that claimed it next: the first makes no progress, neither fails, and the run ends as without the lapse", async () => {
    const seeded = await seedOverApi(t.admin, { name: "lapse", agentBaseUrl: door.baseUrl });
    const { run_id } = await startRun(t.admin, {
      test_spec_id: await seeded.addSpec(deterministicSpecYaml({ repeat: 3, concurrency: 2 })),
      environment_id: seeded.environmentId,
    });
    const [first, second] = [await openNode(), await openNode()];

    // The first node holds two conversations, their agent calls waiting behind the door.
    const firstJob = await claim(first, "worker-first");
    const firstRun = executeRunOn(first)(firstJob.payload, { job: firstJob, signal: new AbortController().signal });
    await waitFor(() => door.waiting >= 2, "the first node's conversations to be in flight");

    // Its lease lapses (it renewed none meanwhile) and the second node claims the job: it reads
    // where the run's log ends, and its first append waits.
    clock.advance(LEASE_MS + 1);
    expect(await second.write(["reclaimExpiredJobs", at()])).toEqual([1]);
    const secondJob = await claim(second, "worker-second");
    expect(secondJob.attempts).toBe(2);
    const held = holdingAppends(second);
    const secondRun = executeRunOn(held.store)(secondJob.payload, {
      job: secondJob,
      signal: new AbortController().signal,
    });
    await waitFor(() => held.holding, "the second node to be about to write to the run's log");
    const logEnds = await second.getLastSequence(run_id);
    const runThen = await second.getRun(run_id);

    // The first node's agent answers: it no longer holds the job, so nothing it writes lands, and
    // it steps aside without failing the run.
    door.open();
    await expect(firstRun).resolves.toBeUndefined();
    expect(await second.getLastSequence(run_id)).toBe(logEnds);
    expect(await second.getRun(run_id)).toEqual(runThen);

    // The second node goes on with the run to its end: its attempt is not burned on a conflict.
    held.release();
    await expect(secondRun).resolves.toBeUndefined();
    const run = await waitForRun(t.admin, run_id);
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    const trace = await readTrace(t.admin, run_id);
    expectGapFree(trace);
    expectEachHeldOnce(await readConversations(t.admin, run_id), 6);
    expect(trace.filter((e) => e.type === "run.resumed").map((e) => e.data.attempt)).toEqual([2]);
    expect(await second.write(["completeJob", secondJob])).toEqual([true]);
  });

  it("judges a run taken over while it was being judged on every kind of check, as a run judged at once is", async () => {
    const seeded = await seedOverApi(t.admin, { name: "lapse-judging", agentBaseUrl: agent.baseUrl });
    const specId = await seeded.addSpec(EXAMPLE_SPEC_YAML);
    const [first, second] = [await openNode(), await openNode()];

    // The same spec, judged without interruption.
    const plain = await startRun(t.admin, { test_spec_id: specId, environment_id: seeded.environmentId });
    const plainRun = await executeOnce(first, "worker-plain", judge.baseUrl);
    await plainRun.done;
    expect(await first.write(["completeJob", plainRun.job])).toEqual([true]);
    const judgedAtOnce = await outcomesOf(plain.run_id);
    expect(new Set(judgedAtOnce.map((outcome) => outcome.split(" ")[0]))).toEqual(
      new Set(["metric", "expectation", "probe", "detector"]),
    );

    // The first node holds every conversation, and its judge's calls wait behind the door.
    const judgeDoor = await startDoor(judge.baseUrl);
    try {
      const { run_id } = await startRun(t.admin, { test_spec_id: specId, environment_id: seeded.environmentId });
      const firstRun = await executeOnce(first, "worker-first", judgeDoor.baseUrl);
      await waitFor(() => judgeDoor.waiting >= 1, "the first node to be judging the run");
      expect((await second.getRun(run_id))!.status).toBe("EVALUATING");

      // Its lease lapses; the second node takes the run over and judges it.
      clock.advance(LEASE_MS + 1);
      expect(await second.write(["reclaimExpiredJobs", at()])).toEqual([1]);
      const secondRun = await executeOnce(second, "worker-second", judge.baseUrl);
      expect(secondRun.job.attempts).toBe(2);
      await expect(secondRun.done).resolves.toBeUndefined();
      expect(await waitForRun(t.admin, run_id)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });

      // The first node's judge answers late: what it judged is refused, the run is left as it ended.
      judgeDoor.open();
      await expect(firstRun.done).resolves.toBeUndefined();
      expect(await outcomesOf(run_id)).toEqual(judgedAtOnce);
      expectGapFree(await readTrace(t.admin, run_id));
    } finally {
      await judgeDoor.close();
    }
  });
});
