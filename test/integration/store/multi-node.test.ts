import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, jest } from "@jest/globals";
import pg from "pg";
import { openPostgresStore } from "../../../server/store/open-postgres-store.js";
import { SequenceConflictError, type ClaimedJob, type LoggedEvent, type Store } from "../../../server/store/index.js";
import type { NewRun } from "../../../server/store/runs.js";
import { makeGroupCommit, type WriteCommand } from "../../../server/store/writer/commands.js";
import { makeSameThreadWriter } from "../../../server/store/writer/same-thread-writer.js";
import type { Writer } from "../../../server/store/writer/start-writer.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { createScratchDatabase, type ScratchDatabase } from "../../helpers/postgres.js";
import { insertQueuedRun } from "../../helpers/store-rows.js";

/**
 * Three service nodes on one PostgreSQL database: three stores (three pools), each writing through
 * its own group commit, as the service does. Their writes are raced with Promise.all.
 */
jest.setTimeout(60_000);
const clock = new FakeClock();
const at = (ms = 0) => new Date(clock.now().getTime() + ms).toISOString();

interface Node {
  store: Store;
  writer: Writer;
  /** The result of one write of one command, through the node's group commit. */
  write<R = unknown>(command: WriteCommand): Promise<R>;
}

let database: ScratchDatabase;
let nodes: Node[];
/** Runs `work` on each node at once, `times` times in all, spread over the nodes in turn. */
const onNodes = <T>(times: number, work: (node: Node, i: number) => Promise<T>) =>
  Promise.all(Array.from({ length: times }, (_, i) => work(nodes[i % nodes.length]!, i)));
const onEveryNode = <T>(work: (node: Node, i: number) => Promise<T>) => onNodes(nodes.length, work);
/** Reads (or writes) the database as it is, through the first node's connections. */
const query = <Row = unknown>(sql: string, ...params: unknown[]) =>
  nodes[0]!.store.sql.prepare(sql).all<Row>(...params);

beforeAll(async () => {
  database = await createScratchDatabase();
  const encryptionKey = randomBytes(32);
  const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(database.url, { clock, encryptionKey })));
  nodes = stores.map((store) => {
    const writer = makeSameThreadWriter(store);
    return {
      store,
      writer,
      write: async <R>(command: WriteCommand) => ((await writer.write(command)) as unknown[])[0] as R,
    };
  });
  await insertQueuedRun(nodes[0]!.store, at()); // prj_1, agt_1, env_1, tsp_1 and run_1
}, 60_000);
afterAll(async () => {
  for (const node of nodes ?? []) {
    await node.writer.close();
    await node.store.close();
  }
  await database?.drop();
});

const newRun = (runId: string, projectId = "prj_1"): NewRun => ({
  run_id: runId,
  project_id: projectId,
  status: "QUEUED",
  verdict: "PENDING",
  failure_cause: null,
  failure_message: null,
  test_spec_id: "tsp_1",
  spec_version: "sha256:x",
  environment_id: "env_1",
  agent_id: "agt_1",
  agent_version: "1",
  agent_url: null,
  source: null,
  started_by: "key_1",
  executor: "service",
  uploaded_by: null,
  created_at: at(),
  updated_at: at(),
  started_at: null,
  ended_at: null,
});
const executeJob = (runId: string) => ({
  task: "execute_run",
  job_key: `execute_run:${runId}`,
  payload: { run_id: runId },
  run_at: at(),
  max_attempts: 5,
});
const createCommand = (projectId: string, key: string, runId: string, maxQueued?: number): WriteCommand => [
  "createRunIdempotently",
  { project_id: projectId, idempotency_key: key, request_hash: "h", now: at(), expires_at: at(86_400_000) },
  newRun(runId, projectId),
  executeJob(runId),
  maxQueued,
];
const resumed = (sequence: number, eventId: string): LoggedEvent => ({
  sequence,
  event_id: eventId,
  type: "run.resumed",
  occurred_at: at(),
  conversation_id: null,
  turn: null,
  data: { attempt: 1, interrupted_conversations: 0, reason: null },
});
const count = <T>(items: readonly T[], where: (item: T) => boolean) => items.filter(where).length;

describe("several nodes on one PostgreSQL database", () => {
  it("claims each of 200 jobs once, however the nodes race for them", async () => {
    await query("DELETE FROM jobs");
    for (let i = 0; i < 200; i++) {
      await nodes[0]!.store.enqueueJob({
        task: "probe",
        job_key: `probe:${i}`,
        payload: { i },
        run_at: at(),
        max_attempts: 3,
        fair_key: i % 4 === 0 ? null : `prj_${i % 5}`,
      });
    }
    const claimed: { job_id: number; locked_by: string }[] = [];
    for (let round = 0; round < 50; round++) {
      const taken = (
        await onEveryNode((node, i) =>
          node.write<{ job_id: number; locked_by: string }[]>(["claimJobs", `node-${i}`, at(), at(60_000), 7]),
        )
      ).flat();
      if (taken.length === 0) break;
      claimed.push(...taken);
    }
    const ids = claimed.map((job) => job.job_id);
    expect(new Set(ids).size).toBe(ids.length); // none claimed twice
    expect(ids.length).toBe(200); // none lost
    const rows = await query<{ attempts: number; n: number }>(
      "SELECT attempts, COUNT(*) AS n FROM jobs WHERE task = 'probe' AND state = 'running' GROUP BY attempts",
    );
    expect(rows).toEqual([{ attempts: 1, n: 200 }]);
    // Every node took its share.
    expect(new Set(claimed.map((job) => job.locked_by)).size).toBe(3);
    await query("DELETE FROM jobs WHERE task = 'probe'");
  });

  it("holds a project's cap on running jobs across the nodes", async () => {
    await query("DELETE FROM jobs");
    for (let i = 0; i < 12; i++) {
      await nodes[0]!.store.enqueueJob({
        task: "capped",
        job_key: `capped:${i}`,
        payload: {},
        run_at: at(),
        max_attempts: 3,
        fair_key: "prj_capped",
      });
    }
    const running = async () =>
      (
        await query<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE fair_key = 'prj_capped' AND state = 'running'")
      )[0]!.n;
    for (let round = 0; round < 5; round++) {
      const taken = (
        await onEveryNode((node, i) =>
          node.write<{ job_id: number; locked_by: string; attempts: number }[]>([
            "claimJobs",
            `node-${i}`,
            at(),
            at(60_000),
            5,
            2,
          ]),
        )
      ).flat();
      expect(taken.length).toBe(2); // the cap, and no more
      expect(await running()).toBe(2);
      for (const job of taken) await nodes[0]!.store.completeJob(job);
    }
    expect(await running()).toBe(0);
    await query("DELETE FROM jobs WHERE task = 'capped'");
  });

  it("creates one run for 20 identical requests spread over the nodes, and replays it to the 19 others", async () => {
    const outcomes = await onNodes(20, (node, i) =>
      node.write<{ kind: string; run?: { run_id: string } }>(createCommand("prj_1", "same-key", `run_same_${i}`)),
    );
    const created = outcomes.filter((outcome) => outcome.kind === "created");
    expect(created.length).toBe(1);
    expect(count(outcomes, (outcome) => outcome.kind === "replay")).toBe(19);
    expect(new Set(outcomes.map((outcome) => outcome.run!.run_id))).toEqual(new Set([created[0]!.run!.run_id]));
    expect(await query("SELECT run_id FROM runs WHERE run_id LIKE 'run_same_%'")).toHaveLength(1);
  });

  it("never queues more of a project's runs than its quota, however many nodes create them at once", async () => {
    await nodes[0]!.store.createProject({ project_id: "prj_quota", name: "q", description: null, created_at: at() });
    const outcomes = await onNodes(12, (node, i) =>
      node.write<{ kind: string }>(createCommand("prj_quota", `key-${i}`, `run_quota_${i}`, 3)),
    );
    expect(count(outcomes, (outcome) => outcome.kind === "created")).toBe(3);
    expect(count(outcomes, (outcome) => outcome.kind === "quota_exceeded")).toBe(9);
    expect(await query("SELECT run_id FROM runs WHERE project_id = 'prj_quota'")).toHaveLength(3);
  });

  it("lets one of three nodes appending the same next event to a run succeed; the others meet a SequenceConflictError", async () => {
    for (let sequence = 1; sequence <= 5; sequence++) {
      const outcomes = await Promise.allSettled(
        nodes.map((node, i) => node.write(["appendEvents", "run_1", [resumed(sequence, `evt_${sequence}_${i}`)]])),
      );
      expect(count(outcomes, (outcome) => outcome.status === "fulfilled")).toBe(1);
      for (const outcome of outcomes) {
        if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(SequenceConflictError);
      }
    }
    const logged = await query<{ sequence: number }>(
      "SELECT sequence FROM run_events WHERE run_id = 'run_1' ORDER BY 1",
    );
    expect(logged.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5]);
  });

  it("refuses the write of a worker whose claim is being taken over: it waits for the claim, then lands nothing", async () => {
    await query("DELETE FROM jobs");
    await nodes[0]!.write(createCommand("prj_1", "fenced", "run_fenced"));
    const [claim] = await nodes[0]!.write<ClaimedJob[]>(["claimJobs", "node-0", at(), at(1000), 1]);
    const fenced = (sequence: number) =>
      nodes[0]!.writer.write(
        ["assertJobClaim", claim!],
        ["appendEvents", "run_fenced", [resumed(sequence, `evt_fenced_${sequence}`)]],
      );
    await fenced(1);

    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      // Another node claims the job again (its lease lapsed), and has not committed yet...
      await other.query("BEGIN");
      await other.query("UPDATE jobs SET attempts = attempts + 1, locked_by = 'node-1' WHERE job_id = $1", [
        claim!.job_id,
      ]);
      // ...while the first node writes on: its write waits for the claim, not reading the job as it was.
      const write = fenced(2);
      let settled = false;
      write.then(
        () => (settled = true),
        () => (settled = true),
      );
      while (
        !settled &&
        (
          await other.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          )
        ).rowCount === 0
      ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await other.query("COMMIT");
      await expect(write).rejects.toMatchObject({ name: "ClaimLostError" });
    } finally {
      await other.end();
    }
    expect(await query("SELECT sequence FROM run_events WHERE run_id = 'run_fenced'")).toEqual([{ sequence: 1 }]);
  });

  it("lets one of three nodes deciding a release decision again log its change; the others find it decided", async () => {
    const store = nodes[0]!.store;
    await store.createRunIdempotently(
      { project_id: "prj_1", idempotency_key: "decided", request_hash: "h", now: at(), expires_at: at(86_400_000) },
      newRun("run_decided"),
      executeJob("run_decided"),
    );
    await store.createDecision(
      { decision_id: "rdc_1", project_id: "prj_1", subject: { run_ids: ["run_decided"] }, plan: [] },
      at(),
    );
    // The run ends; each node, told so, decides again.
    await store.transitionRun({
      run_id: "run_decided",
      from: "QUEUED",
      to: "FAILED",
      terminal: true,
      verdict: "PENDING",
      failure: { cause: "target_unreachable", message: "down" },
      now: at(1000),
    });
    const outcomes = await Promise.allSettled(
      nodes.map((node) => node.write(["refreshDecisionsOfRun", "run_decided", at(1000)])),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    const logged = await query<{ sequence: number; type: string }>(
      "SELECT sequence, type FROM release_decision_events WHERE decision_id = 'rdc_1' ORDER BY sequence",
    );
    expect(logged.map((event) => event.sequence)).toEqual([1, 2]);
  });

  describe("webhook deliveries", () => {
    let webhookId: string;
    const claim = (node: Node, now: string, leaseUntil: string, room: number) =>
      node.write<{ delivery_id: string; lease_until: string }[]>([
        "claimWebhookDeliveries",
        now,
        leaseUntil,
        { [webhookId]: room },
      ]);
    const attempt = (deliveryId: string, leaseUntil: string) => ({
      delivery_id: deliveryId,
      lease_until: leaseUntil,
      attempted_at: at(),
      response_status: 200,
      duration_ms: 5,
      error: null,
      next_attempt_at: null,
      delivered: true,
      disable: null,
    });

    beforeAll(async () => {
      const hook = await nodes[0]!.store.createWebhook(
        {
          webhook_id: "whk_1",
          project_id: "prj_1",
          url: "https://example.com/hook",
          event_types: null,
          description: null,
          secret: "s",
        },
        at(),
      );
      webhookId = hook.webhook_id;
      await nodes[0]!.store.createRunIdempotently(
        { project_id: "prj_1", idempotency_key: "hooked", request_hash: "h", now: at(), expires_at: at(86_400_000) },
        newRun("run_hooked"),
        executeJob("run_hooked"),
      );
    });

    it("claims each delivery once across the nodes", async () => {
      await nodes[0]!.store.appendEvents(
        "run_hooked",
        Array.from({ length: 60 }, (_, i) => resumed(i + 1, `evt_hooked_${i + 1}`)),
      );
      const claimed: string[] = [];
      for (let round = 0; round < 30; round++) {
        const taken = (await onEveryNode((node) => claim(node, at(), at(60_000), 8))).flat();
        if (taken.length === 0) break;
        claimed.push(...taken.map((delivery) => delivery.delivery_id));
      }
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.length).toBe(60);
    });

    it("lets a worker whose lease lapsed settle nothing: the delivery is the new claim's", async () => {
      await query("DELETE FROM webhook_deliveries");
      await nodes[0]!.store.appendEvents("run_hooked", [resumed(61, "evt_hooked_61")]);
      const [first] = await claim(nodes[0]!, at(), at(1000), 1);
      expect(first).toBeDefined();
      // The first lease lapses; another node claims the delivery again.
      const [second] = await claim(nodes[1]!, at(2000), at(62_000), 1);
      expect(second?.delivery_id).toBe(first!.delivery_id);

      expect(await nodes[0]!.write(["recordWebhookAttempt", attempt(first!.delivery_id, first!.lease_until)])).toEqual({
        recorded: false,
        failing_since: null,
      });
      const [delivery] = await query<{ status: string; attempts: number; lease_until: string }>(
        "SELECT status, attempts, lease_until FROM webhook_deliveries WHERE delivery_id = ?",
        first!.delivery_id,
      );
      expect(delivery).toEqual({ status: "pending", attempts: 0, lease_until: second!.lease_until });
      expect(await query("SELECT * FROM webhook_attempts")).toEqual([]);

      expect(
        await nodes[1]!.write(["recordWebhookAttempt", attempt(second!.delivery_id, second!.lease_until)]),
      ).toMatchObject({ recorded: true });
      expect(
        await query("SELECT status, attempts FROM webhook_deliveries WHERE delivery_id = ?", first!.delivery_id),
      ).toEqual([{ status: "delivered", attempts: 1 }]);
      expect(await query("SELECT attempt FROM webhook_attempts")).toEqual([{ attempt: 1 }]);
    });
  });

  it("runs a batch again when it deadlocks with another transaction, and then commits every write", async () => {
    for (const id of ["whk_a", "whk_b"]) {
      await nodes[0]!.store.createWebhook(
        {
          webhook_id: id,
          project_id: "prj_1",
          url: "https://example.com/x",
          event_types: null,
          description: null,
          secret: "s",
        },
        at(),
      );
    }
    const described = (id: string): WriteCommand => [
      "updateWebhook",
      id,
      { url: "https://example.com/x", event_types: null, description: "from the batch", enabled: true },
      at(),
    ];
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      // The other transaction holds whk_b; it never looks for the deadlock itself: the batch does, and gives way.
      await other.query("BEGIN; SET LOCAL deadlock_timeout = '60s'");
      await other.query("UPDATE webhooks SET description = 'from the other' WHERE webhook_id = 'whk_b'");
      const committed = makeGroupCommit(nodes[0]!.store)([[described("whk_a")], [described("whk_b")]]);
      // The batch holds whk_a and waits for whk_b...
      while (
        (
          await other.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          )
        ).rowCount === 0
      ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // ...and the other now waits for whk_a: a deadlock, which PostgreSQL breaks by failing the batch's statement.
      await other.query("UPDATE webhooks SET description = 'from the other' WHERE webhook_id = 'whk_a'");
      await other.query("COMMIT");
      const outcomes = await committed;
      expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true]);
      // Run again after the other committed: the batch's writes are the last.
      expect(
        await query("SELECT webhook_id, description FROM webhooks WHERE webhook_id IN ('whk_a', 'whk_b') ORDER BY 1"),
      ).toEqual([
        { webhook_id: "whk_a", description: "from the batch" },
        { webhook_id: "whk_b", description: "from the batch" },
      ]);
    } finally {
      await other.end();
    }
  });
});
