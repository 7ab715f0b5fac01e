import {
  DEFAULT_CHANGE_SETTINGS,
  GITHUB_APP_KEY_ID,
  POLICY_GATE,
  decisionPath,
  evidencePath,
  runPath,
  type DecisionEvent,
  type DecisionBase,
  type DecisionBaseline,
  type DecisionChanges,
  type DecisionReason,
  type DecisionStatus,
  type DecisionEventData,
  type DecisionEventType,
  type DecisionUpdatedData,
  type PolicyApproval,
  type ReleaseDecision,
  type Run,
  type Waiver,
} from "../contract/index.js";
import type { DecisionFacts, DecisionRecord, Judged } from "../decisions/judge-decision.js";
import { makeIdGenerator } from "../ids.js";
import { contentAddress } from "../specs/canonical-json.js";
import { makeKeyLocks } from "./sql/key-locks.js";
import type { Sql } from "./sql/sql.js";
import type { JobsStore } from "./jobs.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";
import { makeProjectTable } from "./project-table.js";
import { makeDecisionFacts } from "./decision-facts.js";
import type { RunRow } from "./runs.js";

interface DecisionRow {
  decision_id: string;
  project_id: string;
  repository: string | null;
  commit_sha: string | null;
  attempt: number;
  status: DecisionStatus;
  /** JSON of DecisionReason[]. */
  reasons: string;
  created_at: string;
  updated_at: string;
  decided_at: string | null;
  /** JSON of DecisionBase: what the client gave of the base branch; null when not compared. */
  base: string | null;
  /** JSON of DecisionBaseline, chosen when the decision was made. */
  baseline: string | null;
  /** JSON of the base branch's decided decisions along the chain, oldest first (for flakiness). */
  history: string | null;
  /** JSON of DecisionChanges, kept with the reasons. */
  changes: string | null;
  /** Who planned it: the GitHub App, from what GitHub says, or the client that made it. */
  planned_by: "app" | "client";
}

interface SlotRow {
  decision_id: string;
  attempt: number;
  position: number;
  test_spec_id: string;
  environment_id: string;
  /** The spec version the App planned (a run of another version does not fill it); null: any. */
  spec_version: string | null;
  /** Who executes its run: the service, or someone outside it who uploads it (only such a run fills it). */
  executor: "service" | "local";
  run_id: string | null;
  /** What it waits for before its run can start, and until when (both null when it waits for nothing). */
  waiting_for: string | null;
  wait_until: string | null;
}

interface WaiverRow {
  waiver_id: string;
  decision_id: string;
  run_id: string | null;
  gate_id: string;
  reason: string;
  expires_at: string | null;
  revokes: string | null;
  created_by_key: string | null;
  created_by_login: string | null;
  created_at: string;
  /** The revocation that took it back: joined, not stored. */
  revoked_by: string | null;
}

export interface DecisionEventRow {
  decision_id: string;
  sequence: number;
  event_id: string;
  type: string;
  occurred_at: string;
  run_id: string | null;
  data: string;
}

/** A run a decision waits for: a spec (at a version, when the App planned it) in an environment. */
export interface PlanSlot {
  test_spec_id: string;
  environment_id: string;
  spec_version?: string | null | undefined;
  /** local: waits for an uploaded run (executor: local) instead of one the service executes. */
  executor?: "service" | "local" | undefined;
}

export interface NewDecision {
  decision_id: string;
  project_id: string;
  subject: { repository: string; commit_sha: string } | { run_ids: string[] };
  plan: PlanSlot[];
  base?: DecisionBase | undefined;
}

/** A commit's decision as the GitHub App plans it: what it waits for, its base branch (if it has one), and whether to start over. */
export interface AppPlan {
  decision_id: string;
  project_id: string;
  subject: { repository: string; commit_sha: string };
  plan: PlanSlot[];
  base: DecisionBase | null;
  /** Start the commit's runs again: a new attempt. */
  rerun: boolean;
}

/** What a planned run (a spec in an environment) of a decision's current attempt waits for, until when. */
export interface SlotWait {
  decision_id: string;
  test_spec_id: string;
  environment_id: string;
  waiting_for: string;
  wait_until: string;
}

// Changes saved before flakiness was measured have no flaky labels.
const changesOf = (changes: DecisionChanges): DecisionChanges => ({
  ...changes,
  cases: changes.cases.map((c) => ({ ...c, flaky: c.flaky ?? null })),
  flaky: changes.flaky ?? [],
  usage: changes.usage ?? [],
});

/**
 * How a decision is judged and its baseline chosen: pure functions over what the store reads
 * (`server/decisions`), given to the store so that it keeps to SQL and rows.
 */
export interface DecisionJudge {
  judgeDecision(record: DecisionRecord, facts: DecisionFacts, now: string): Judged;
  chooseBaselineOf(
    decision: { project_id: string; repository: string },
    base: DecisionBase,
    facts: Pick<DecisionFacts, "decidedDecisionOf">,
  ): { baseline: DecisionBaseline; history: string[] };
  /** What an approval of a decision's policy changes approves. */
  policyHashOf(base: DecisionBase | null): string;
}

const waitOf = (slot: Pick<SlotRow, "waiting_for" | "wait_until">) =>
  slot.waiting_for !== null && slot.wait_until !== null ? { for: slot.waiting_for, until: slot.wait_until } : null;

export type NewWaiver = Pick<
  WaiverRow,
  "waiver_id" | "decision_id" | "run_id" | "gate_id" | "reason" | "expires_at"
> & {
  created_by: { key_id: string | null; github_login: string | null };
};

/** A decision's event as the API (and a webhook) sends it. */
export function toDecisionEvent(row: DecisionEventRow): DecisionEvent {
  return {
    schema_version: "1",
    event_id: row.event_id,
    decision_id: row.decision_id,
    run_id: row.run_id,
    sequence: row.sequence,
    type: row.type,
    occurred_at: row.occurred_at,
    data: JSON.parse(row.data) as DecisionUpdatedData,
  };
}

/** The job that takes a waiver's expiry into account when it comes. */
export const REFRESH_RELEASE_DECISION = "refresh_release_decision";

/**
 * Release decisions and their waivers. A decision's status and reasons are a projection of the
 * runs planned in its current attempt, their gates and the waivers in force: `refresh` keeps it up
 * to date, in the transaction of whatever changed what it rests on, and appends an event when it
 * changes.
 */
export function makeReleaseDecisionsStore(
  db: Sql,
  listPage: ListPage,
  jobs: Pick<JobsStore["writes"], "enqueueJob">,
  outbox: { enqueueDecisionEvent(decisionId: string, sequence: number, now: string): Promise<void> },
  judge: DecisionJudge,
) {
  const facts = makeDecisionFacts(db);
  const locks = makeKeyLocks(db);
  const { policyHashOf } = judge;
  const decisions = makeProjectTable<DecisionRow>(db, listPage, "release_decisions", "decision_id");
  const insertDecision = db.prepare(`INSERT INTO release_decisions
      (decision_id, project_id, repository, commit_sha, attempt, status, reasons, created_at, updated_at, decided_at, planned_by)
    VALUES (@decision_id, @project_id, @repository, @commit_sha, 1, 'PENDING', '[]', @now, @now, NULL, @planned_by)`);
  const bySubject = db.prepare(
    "SELECT * FROM release_decisions WHERE project_id = ? AND repository = ? AND commit_sha = ?",
  );
  const byId = db.prepare("SELECT * FROM release_decisions WHERE decision_id = ?");
  const saveState = db.prepare(`UPDATE release_decisions SET status = @status, reasons = @reasons, updated_at = @now,
      decided_at = CASE WHEN @status = 'PENDING' THEN NULL WHEN status = @status AND decided_at IS NOT NULL THEN decided_at ELSE @now END
    WHERE decision_id = @decision_id`);
  const saveChanges = db.prepare("UPDATE release_decisions SET changes = ? WHERE decision_id = ?");
  const saveBase = db.prepare(
    "UPDATE release_decisions SET base = @base, baseline = @baseline, history = @history WHERE decision_id = @decision_id",
  );
  const raiseAttempt = db.prepare(
    "UPDATE release_decisions SET attempt = attempt + 1, updated_at = ? WHERE decision_id = ?",
  );
  const planByApp = db.prepare("UPDATE release_decisions SET planned_by = 'app' WHERE decision_id = ?");

  const insertSlot =
    db.prepare(`INSERT INTO release_decision_slots (decision_id, attempt, position, test_spec_id, environment_id, spec_version, run_id, executor)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const slotsOf = db.prepare(
    "SELECT * FROM release_decision_slots WHERE decision_id = ? AND attempt = ? ORDER BY position",
  );
  const allSlotsOf = db.prepare(
    "SELECT * FROM release_decision_slots WHERE decision_id = ? ORDER BY attempt, position",
  );
  const fillSlot = db.prepare(`UPDATE release_decision_slots SET run_id = @run_id
    WHERE decision_id = @decision_id AND attempt = @attempt AND test_spec_id = @test_spec_id AND environment_id = @environment_id AND run_id IS NULL
      AND (spec_version IS NULL OR spec_version = @spec_version) AND executor = @executor`);
  const waitInSlot =
    db.prepare(`UPDATE release_decision_slots SET waiting_for = @waiting_for, wait_until = coalesce(wait_until, @wait_until)
    WHERE decision_id = @decision_id AND attempt = @attempt AND test_spec_id = @test_spec_id AND environment_id = @environment_id AND run_id IS NULL
    RETURNING wait_until`);
  const decisionsOfRun = db.prepare("SELECT DISTINCT decision_id FROM release_decision_slots WHERE run_id = ?").pluck();
  // The App's slots take only the App's own runs: a run a client started for the commit tests what the client chose.
  // A slot that waits for an upload takes only an uploaded run (whoever uploaded it), and no other slot does.
  const latestRunOf = db
    .prepare(
      `SELECT run_id FROM runs WHERE project_id = @project_id AND source_repository = @repository AND source_commit_sha = @commit_sha
      AND test_spec_id = @test_spec_id AND environment_id = @environment_id AND (CAST(@spec_version AS TEXT) IS NULL OR spec_version = @spec_version)
      AND executor = @executor AND (@planned_by = 'client' OR executor = 'local' OR started_by = '${GITHUB_APP_KEY_ID}')
    ORDER BY created_at DESC, run_id DESC LIMIT 1`,
    )
    .pluck();
  const runsOfSource =
    db.prepare(`SELECT * FROM runs WHERE project_id = ? AND source_repository = ? AND source_commit_sha = ?
    ORDER BY created_at, run_id`);
  const runById = db.prepare("SELECT * FROM runs WHERE run_id = ?");
  // A policy approval is kept as a waiver of the decision's gate `policy`, naming no run; the API shows it apart.
  const waiversOf =
    db.prepare(`SELECT w.*, r.waiver_id AS revoked_by FROM waivers w LEFT JOIN waivers r ON r.revokes = w.waiver_id
    WHERE w.decision_id = @decision_id AND w.run_id IS NOT NULL AND (CAST(@after AS TEXT) IS NULL OR w.waiver_id > @after) ORDER BY w.waiver_id LIMIT @limit`);
  const waiverById =
    db.prepare(`SELECT w.*, r.waiver_id AS revoked_by FROM waivers w LEFT JOIN waivers r ON r.revokes = w.waiver_id
    WHERE w.decision_id = ? AND w.waiver_id = ? AND w.run_id IS NOT NULL`);
  const approvalsOf = db.prepare("SELECT * FROM waivers WHERE decision_id = ? AND run_id IS NULL ORDER BY waiver_id");
  const inForce = db.prepare(`SELECT w.waiver_id, w.run_id, w.gate_id, w.policy_hash FROM waivers w
    WHERE w.decision_id = ? AND w.revokes IS NULL AND (w.expires_at IS NULL OR w.expires_at > ?)
      AND NOT EXISTS (SELECT 1 FROM waivers r WHERE r.revokes = w.waiver_id)`);
  const insertWaiver = db.prepare(`INSERT INTO waivers
      (waiver_id, decision_id, run_id, gate_id, reason, expires_at, revokes, created_by_key, created_by_login, created_at, policy_hash)
    VALUES (@waiver_id, @decision_id, @run_id, @gate_id, @reason, @expires_at, @revokes, @created_by_key, @created_by_login, @created_at, @policy_hash)`);

  const lastEvent = db
    .prepare("SELECT COALESCE(MAX(sequence), 0) AS sequence FROM release_decision_events WHERE decision_id = ?")
    .pluck();
  const insertEvent =
    db.prepare(`INSERT INTO release_decision_events (decision_id, sequence, event_id, type, occurred_at, run_id, data)
    VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const eventsPage = db.prepare(
    "SELECT * FROM release_decision_events WHERE decision_id = ? AND sequence > ? ORDER BY sequence LIMIT ?",
  );

  const toRun = (runId: string) => runById.get<RunRow>(runId);

  /** The runs a decision shows: its commit's, or (a decision of runs) those it names. */
  async function runsOfDecision(row: DecisionRow, slots: readonly SlotRow[]): Promise<RunRow[]> {
    if (row.repository !== null) return runsOfSource.all<RunRow>(row.project_id, row.repository, row.commit_sha);
    const runs: RunRow[] = [];
    for (const slot of slots) runs.push((await toRun(slot.run_id!))!);
    return runs;
  }

  async function toDecision(row: DecisionRow): Promise<ReleaseDecision> {
    const slots = await allSlotsOf.all<SlotRow>(row.decision_id);
    const current = slots.filter((slot) => slot.attempt === row.attempt);
    const base = row.base ? (JSON.parse(row.base) as DecisionBase) : null;
    const attemptOf = new Map(slots.filter((slot) => slot.run_id).map((slot) => [slot.run_id!, slot.attempt]));
    const runs = await runsOfDecision(row, slots);
    return {
      decision_id: row.decision_id,
      project_id: row.project_id,
      status: row.status,
      subject:
        row.repository !== null
          ? { repository: row.repository, commit_sha: row.commit_sha! }
          : { run_ids: slots.map((s) => s.run_id!) },
      planned_by: row.planned_by,
      attempt: row.attempt,
      planned: current.map((slot) => ({
        test_spec_id: slot.test_spec_id,
        environment_id: slot.environment_id,
        spec_version: slot.spec_version,
        executor: slot.executor,
        run_id: slot.run_id,
        waiting: slot.run_id ? null : waitOf(slot),
      })),
      // Reasons saved before gates were judged against a base branch have no baseline_evidence_refs.
      reasons: (JSON.parse(row.reasons) as DecisionReason[]).map((reason) => ({
        ...reason,
        baseline_evidence_refs: reason.baseline_evidence_refs ?? [],
      })),
      runs: runs.map((run) => ({
        run_id: run.run_id,
        test_spec_id: run.test_spec_id,
        environment_id: run.environment_id,
        status: run.status,
        verdict: run.verdict,
        planned: current.some((slot) => slot.run_id === run.run_id),
        executor: run.executor,
        uploaded_by: run.uploaded_by,
        attempt: attemptOf.get(run.run_id) ?? null,
        links: { run: runPath(run.run_id), evidence: evidencePath(run.run_id) },
      })),
      baseline: row.baseline ? (JSON.parse(row.baseline) as DecisionBaseline) : null,
      changes: row.changes ? changesOf(JSON.parse(row.changes) as DecisionChanges) : null,
      policy_changes: base?.policy_changes ?? [],
      // Settings saved before a key was added have its default.
      change_settings: base ? { ...DEFAULT_CHANGE_SETTINGS, ...base.settings } : null,
      created_at: row.created_at,
      updated_at: row.updated_at,
      decided_at: row.decided_at,
      links: {
        self: decisionPath(row.decision_id),
        events: `${decisionPath(row.decision_id)}/events`,
        waivers: `${decisionPath(row.decision_id)}/waivers`,
      },
    };
  }

  function toApproval(row: WaiverRow): PolicyApproval {
    return {
      approval_id: row.waiver_id,
      decision_id: row.decision_id,
      reason: row.reason,
      created_by: { key_id: row.created_by_key, github_login: row.created_by_login },
      created_at: row.created_at,
    };
  }

  function toWaiver(row: WaiverRow, now: string): Waiver {
    return {
      waiver_id: row.waiver_id,
      decision_id: row.decision_id,
      run_id: row.run_id!,
      gate_id: row.gate_id,
      reason: row.reason,
      expires_at: row.expires_at,
      revokes: row.revokes,
      revoked_by: row.revoked_by,
      active: row.revokes === null && row.revoked_by === null && (row.expires_at === null || row.expires_at > now),
      created_by: { key_id: row.created_by_key, github_login: row.created_by_login },
      created_at: row.created_at,
    };
  }

  /**
   * Decides again from what the decision rests on now; if its status or reasons changed, saves
   * them and appends a `release_decision.updated` event (`runId`: the run whose end caused it).
   */
  async function refresh(decisionId: string, now: string, runId: string | null = null): Promise<void> {
    // Refreshes of one decision take turns across nodes: each decides from what the one before saved,
    // and its event follows the one before's.
    return db.transaction(async () => {
      await locks.lock("decision log", decisionId);
      const row = (await byId.get<DecisionRow>(decisionId))!;
      const record: DecisionRecord = {
        decision_id: decisionId,
        base: row.base ? (JSON.parse(row.base) as DecisionBase) : null,
        baseline: row.baseline ? (JSON.parse(row.baseline) as DecisionBaseline) : null,
        history: row.history ? (JSON.parse(row.history) as string[]) : [],
        slots: (await slotsOf.all<SlotRow>(decisionId, row.attempt)).map((slot) => ({
          test_spec_id: slot.test_spec_id,
          environment_id: slot.environment_id,
          run_id: slot.run_id,
          waiting: waitOf(slot),
        })),
        waivers: await inForce.all<DecisionRecord["waivers"][number]>(decisionId, now),
      };
      const decided = judge.judgeDecision(record, await facts.forJudging(record), now);
      const reasons = JSON.stringify(decided.reasons);
      const changes = decided.changes && JSON.stringify(decided.changes);
      const isNew = (await lastEvent.get<number>(decisionId)) === 0;
      if (changes !== row.changes) await saveChanges.run(changes, decisionId);
      if (!isNew && decided.status === row.status && reasons === row.reasons) return;
      await saveState.run({ decision_id: decisionId, status: decided.status, reasons, now });
      await appendEvent(decisionId, now, runId, "release_decision.updated", {
        status: decided.status,
        previous_status: isNew ? null : row.status,
        attempt: row.attempt,
        blocking: decided.reasons.filter((r) => r.blocking).length,
      });
    });
  }

  /** Appends an event to a decision's, and queues its delivery to webhooks. */
  async function appendEvent<T extends DecisionEventType>(
    decisionId: string,
    now: string,
    runId: string | null,
    type: T,
    data: DecisionEventData<T>,
  ): Promise<void> {
    const sequence = (await lastEvent.get<number>(decisionId))! + 1;
    const eventId = makeIdGenerator({ now: () => new Date(now) })("event");
    await insertEvent.run(decisionId, sequence, eventId, type, now, runId, JSON.stringify(data));
    await outbox.enqueueDecisionEvent(decisionId, sequence, now);
  }

  /** Fills the current attempt's slot of each given (spec, environment) with the latest run of the subject that tests it. */
  async function fillSlotsFromRuns(row: DecisionRow): Promise<void> {
    for (const slot of await slotsOf.all<SlotRow>(row.decision_id, row.attempt)) {
      if (slot.run_id) continue;
      const runId = await latestRunOf.get<string>({
        ...slot,
        project_id: row.project_id,
        repository: row.repository,
        commit_sha: row.commit_sha,
        planned_by: row.planned_by,
      });
      if (runId) await fillSlot.run({ ...slot, run_id: runId, spec_version: (await toRun(runId))!.spec_version });
    }
  }

  async function addSlots(decisionId: string, attempt: number, plan: readonly PlanSlot[]): Promise<void> {
    for (const [position, slot] of plan.entries()) {
      await insertSlot.run(
        decisionId,
        attempt,
        position,
        slot.test_spec_id,
        slot.environment_id,
        slot.spec_version ?? null,
        null,
        slot.executor ?? "service",
      );
    }
  }

  /** Keeps what the decision is judged against (a pull request's base branch), with the baseline and history chosen from it now. */
  async function setBase(
    row: Pick<DecisionRow, "decision_id" | "project_id" | "repository">,
    base: DecisionBase,
  ): Promise<void> {
    const decision = { project_id: row.project_id, repository: row.repository! };
    const { baseline, history } = judge.chooseBaselineOf(decision, base, await facts.forBaseline(decision, base));
    await saveBase.run({
      decision_id: row.decision_id,
      base: JSON.stringify(base),
      baseline: JSON.stringify(baseline),
      history: JSON.stringify(history),
    });
  }

  const planOf = (slots: readonly PlanSlot[]) =>
    contentAddress(
      slots.map((s) => [
        s.test_spec_id,
        s.environment_id,
        s.spec_version ?? null,
        ...(s.executor === "local" ? ["local"] : []),
      ]),
    );

  /** Each row as the API shows it, in order. */
  async function toDecisions(rows: readonly DecisionRow[]): Promise<ReleaseDecision[]> {
    const shown: ReleaseDecision[] = [];
    for (const row of rows) shown.push(await toDecision(row));
    return shown;
  }

  /** The decision as it is now. */
  const decisionNow = async (decisionId: string) => toDecision((await byId.get<DecisionRow>(decisionId))!);

  return {
    reads: {
      async getDecision(decisionId: string): Promise<ReleaseDecision | undefined> {
        const row = await decisions.get(decisionId);
        return row && toDecision(row);
      },
      async getDecisionForCommit(
        projectId: string,
        repository: string,
        commitSha: string,
      ): Promise<ReleaseDecision | undefined> {
        const row = await bySubject.get<DecisionRow>(projectId, repository, commitSha);
        return row && toDecision(row);
      },
      async listDecisions(
        filter: {
          project_id?: string | undefined;
          repository?: string | undefined;
          commit_sha?: string | undefined;
          status?: DecisionStatus | undefined;
        },
        page: PageRequest,
      ): Promise<RowPage<ReleaseDecision>> {
        const filters = (
          [
            ["project_id = ?", filter.project_id],
            ["repository = ?", filter.repository],
            ["commit_sha = ?", filter.commit_sha],
            ["status = ?", filter.status],
          ] as const
        ).filter(([, value]) => value !== undefined);
        const { rows, next } = await listPage<DecisionRow>("release_decisions", "decision_id", filters, page);
        return { rows: await toDecisions(rows), next };
      },
      async listDecisionEvents(decisionId: string, afterSequence: number, limit: number): Promise<DecisionEvent[]> {
        return (await eventsPage.all<DecisionEventRow>(decisionId, afterSequence, limit)).map(toDecisionEvent);
      },
      async getWaiver(decisionId: string, waiverId: string, now: string): Promise<Waiver | undefined> {
        const row = await waiverById.get<WaiverRow>(decisionId, waiverId);
        return row && toWaiver(row, now);
      },
      async listWaivers(decisionId: string, after: string | undefined, limit: number, now: string): Promise<Waiver[]> {
        const rows = await waiversOf.all<WaiverRow>({ decision_id: decisionId, after: after ?? null, limit });
        return rows.map((row) => toWaiver(row, now));
      },
      async listPolicyApprovals(decisionId: string): Promise<PolicyApproval[]> {
        return (await approvalsOf.all<WaiverRow>(decisionId)).map(toApproval);
      },
      async getPolicyApproval(decisionId: string, approvalId: string): Promise<PolicyApproval | undefined> {
        const row = (await approvalsOf.all<WaiverRow>(decisionId)).find((r) => r.waiver_id === approvalId);
        return row && toApproval(row);
      },
    },
    writes: {
      /**
       * Makes the decision, or finds the one of its commit. A commit's decision waits for `plan`, each
       * slot filled with the subject's latest run of that spec and environment if there is one.
       */
      async createDecision(
        decision: NewDecision,
        now: string,
      ): Promise<{ decision: ReleaseDecision; created: boolean }> {
        const { subject } = decision;
        if ("repository" in subject) {
          const existing = await bySubject.get<DecisionRow>(
            decision.project_id,
            subject.repository,
            subject.commit_sha,
          );
          if (existing) return { decision: await toDecision(existing), created: false };
        }
        const commit = "repository" in subject ? subject : { repository: null, commit_sha: null };
        await insertDecision.run({
          decision_id: decision.decision_id,
          project_id: decision.project_id,
          ...commit,
          now,
          planned_by: "client",
        });
        if (decision.base && "repository" in subject) {
          await setBase(
            { decision_id: decision.decision_id, project_id: decision.project_id, repository: subject.repository },
            decision.base,
          );
        }
        if ("run_ids" in subject) {
          for (const [position, runId] of subject.run_ids.entries()) {
            const run = (await toRun(runId))!;
            await insertSlot.run(
              decision.decision_id,
              1,
              position,
              run.test_spec_id,
              run.environment_id,
              null,
              runId,
              run.executor,
            );
          }
        } else {
          await addSlots(decision.decision_id, 1, decision.plan);
          await fillSlotsFromRuns((await byId.get<DecisionRow>(decision.decision_id))!);
        }
        await refresh(decision.decision_id, now);
        return { decision: await decisionNow(decision.decision_id), created: true };
      },
      /**
       * Makes or brings up to date a commit's decision as the GitHub App plans it. A decision a client
       * planned becomes the App's, in a new attempt that waits for the App's plan; a plan that changed,
       * or a re-run, starts a new attempt too; a base branch that became known (or moved) is taken, its
       * baseline chosen again. Whatever order the App learns things in, the decision ends up the same.
       */
      async planAppDecision(plan: AppPlan, now: string): Promise<{ decision: ReleaseDecision; created: boolean }> {
        const existing = await bySubject.get<DecisionRow>(
          plan.project_id,
          plan.subject.repository,
          plan.subject.commit_sha,
        );
        if (!existing) {
          await insertDecision.run({
            decision_id: plan.decision_id,
            project_id: plan.project_id,
            ...plan.subject,
            now,
            planned_by: "app",
          });
          const row = (await byId.get<DecisionRow>(plan.decision_id))!;
          if (plan.base) await setBase(row, plan.base);
          await addSlots(plan.decision_id, 1, plan.plan);
          await fillSlotsFromRuns((await byId.get<DecisionRow>(plan.decision_id))!);
          await refresh(plan.decision_id, now);
          return { decision: await decisionNow(plan.decision_id), created: true };
        }
        const current = await slotsOf.all<SlotRow>(existing.decision_id, existing.attempt);
        if (existing.planned_by !== "app") await planByApp.run(existing.decision_id);
        if (existing.planned_by !== "app" || plan.rerun || planOf(current) !== planOf(plan.plan)) {
          await raiseAttempt.run(now, existing.decision_id);
          await addSlots(existing.decision_id, existing.attempt + 1, plan.plan);
          // A re-run waits for new runs; otherwise the App's runs of the plan, if it made them already, count.
          if (!plan.rerun) await fillSlotsFromRuns((await byId.get<DecisionRow>(existing.decision_id))!);
        }
        const storedBase = existing.base ? contentAddress(JSON.parse(existing.base)) : null;
        if (plan.base && contentAddress(plan.base) !== storedBase) await setBase(existing, plan.base);
        await refresh(existing.decision_id, now);
        return { decision: await decisionNow(existing.decision_id), created: false };
      },
      /** Starts the subject's runs again: a new attempt waits for `plan` (the current one if not given), with no runs yet. */
      async startDecisionAttempt(
        decisionId: string,
        plan: NewDecision["plan"] | undefined,
        now: string,
      ): Promise<ReleaseDecision> {
        const row = (await byId.get<DecisionRow>(decisionId))!;
        const next: readonly PlanSlot[] = plan ?? (await slotsOf.all<SlotRow>(decisionId, row.attempt));
        await raiseAttempt.run(now, decisionId);
        await addSlots(decisionId, row.attempt + 1, next);
        await refresh(decisionId, now);
        return decisionNow(decisionId);
      },
      /** Records a waiver, refreshes the decision, and schedules its refresh when the waiver expires. */
      async addWaiver(waiver: NewWaiver, now: string): Promise<Waiver> {
        await insertWaiver.run({
          ...waiver,
          revokes: null,
          created_by_key: waiver.created_by.key_id,
          created_by_login: waiver.created_by.github_login,
          created_at: now,
          policy_hash: null,
        });
        if (waiver.expires_at !== null) {
          await jobs.enqueueJob({
            task: REFRESH_RELEASE_DECISION,
            job_key: `${REFRESH_RELEASE_DECISION}:${waiver.waiver_id}`,
            payload: { decision_id: waiver.decision_id },
            run_at: waiver.expires_at,
            max_attempts: 5,
          });
        }
        await refresh(waiver.decision_id, now);
        return toWaiver((await waiverById.get<WaiverRow>(waiver.decision_id, waiver.waiver_id))!, now);
      },
      /** Records an approval of the head's policy changes, and refreshes the decision. */
      async approvePolicy(
        approval: Pick<NewWaiver, "decision_id" | "reason" | "created_by"> & { approval_id: string },
        now: string,
      ): Promise<PolicyApproval> {
        const row = (await byId.get<DecisionRow>(approval.decision_id))!;
        await insertWaiver.run({
          policy_hash: policyHashOf(row.base ? (JSON.parse(row.base) as DecisionBase) : null),
          waiver_id: approval.approval_id,
          decision_id: approval.decision_id,
          run_id: null,
          gate_id: POLICY_GATE,
          reason: approval.reason,
          expires_at: null,
          revokes: null,
          created_by_key: approval.created_by.key_id,
          created_by_login: approval.created_by.github_login,
          created_at: now,
        });
        await refresh(approval.decision_id, now);
        const approvals = await approvalsOf.all<WaiverRow>(approval.decision_id);
        return toApproval(approvals.find((row) => row.waiver_id === approval.approval_id)!);
      },
      /** Takes a waiver back with a record of its own; undefined if it was revoked already. */
      async revokeWaiver(
        revocation: Omit<NewWaiver, "run_id" | "gate_id" | "expires_at"> & { revokes: string },
        now: string,
      ): Promise<Waiver | undefined> {
        const target = (await waiverById.get<WaiverRow>(revocation.decision_id, revocation.revokes))!;
        if (target.revoked_by !== null) return undefined;
        await insertWaiver.run({
          ...revocation,
          policy_hash: null,
          run_id: target.run_id,
          gate_id: target.gate_id,
          expires_at: null,
          created_by_key: revocation.created_by.key_id,
          created_by_login: revocation.created_by.github_login,
          created_at: now,
        });
        await refresh(revocation.decision_id, now);
        return toWaiver((await waiverById.get<WaiverRow>(revocation.decision_id, revocation.waiver_id))!, now);
      },
      /**
       * Says what a planned run waits for before it can start (a deployment, the agent to be ready):
       * the decision shows it, and gives up at the deadline set the first time (a wait is not
       * extended by saying it again). Returns the deadline; nothing happens (undefined) once the slot has its run.
       */
      async waitForPlannedRun(wait: SlotWait, now: string): Promise<string | undefined> {
        const row = await byId.get<DecisionRow>(wait.decision_id);
        if (!row) return undefined;
        const set = await waitInSlot.get<{ wait_until: string }>({ ...wait, attempt: row.attempt });
        if (!set) return undefined;
        await jobs.enqueueJob({
          task: REFRESH_RELEASE_DECISION,
          job_key: `${REFRESH_RELEASE_DECISION}:${wait.decision_id}:${set.wait_until}`,
          payload: { decision_id: wait.decision_id },
          run_at: set.wait_until,
          max_attempts: 5,
        });
        await refresh(wait.decision_id, now);
        return set.wait_until;
      },
      /** Decides again (a waiver expired, say). */
      async refreshDecision(decisionId: string, now: string): Promise<void> {
        if (await byId.get(decisionId)) await refresh(decisionId, now);
      },
      /** Decides again every decision that waits for this run: called when the run ends. */
      async refreshDecisionsOfRun(runId: string, now: string): Promise<void> {
        for (const decisionId of await decisionsOfRun.all<string>(runId)) await refresh(decisionId, now, runId);
      },
    },
    /** When a run with a commit source is created: it fills its slot in that commit's decision, if the current attempt plans it. */
    async linkRun(run: Run, now: string): Promise<void> {
      if (!run.source) return;
      const row = await bySubject.get<DecisionRow>(run.project_id, run.source.repository, run.source.commit_sha);
      if (!row) return;
      // The App's slots take only the App's own runs (a run a client started for the commit tests what the client chose),
      // or, in a slot that waits for one, an uploaded run.
      if (row.planned_by === "app" && run.executor === "service" && run.started_by !== GITHUB_APP_KEY_ID) return;
      const filled = await fillSlot.run({
        decision_id: row.decision_id,
        attempt: row.attempt,
        test_spec_id: run.test_spec_id,
        environment_id: run.environment_id,
        spec_version: run.spec_version,
        executor: run.executor,
        run_id: run.run_id,
      });
      if (filled.changes > 0) await refresh(row.decision_id, now, run.run_id);
    },
  };
}
