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
import type { Db } from "./db.js";
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
    facts: DecisionFacts,
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
  db: Db,
  listPage: ListPage,
  jobs: Pick<JobsStore["writes"], "enqueueJob">,
  outbox: { enqueueDecisionEvent(decisionId: string, sequence: number, now: string): void },
  judge: DecisionJudge,
) {
  const facts = makeDecisionFacts(db);
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

  const toRun = (runId: string) => runById.get(runId) as RunRow | undefined;

  function toDecision(row: DecisionRow): ReleaseDecision {
    const slots = allSlotsOf.all(row.decision_id) as SlotRow[];
    const current = slots.filter((slot) => slot.attempt === row.attempt);
    const base = row.base ? (JSON.parse(row.base) as DecisionBase) : null;
    const attemptOf = new Map(slots.filter((slot) => slot.run_id).map((slot) => [slot.run_id!, slot.attempt]));
    const runs =
      row.repository !== null
        ? (runsOfSource.all(row.project_id, row.repository, row.commit_sha) as RunRow[])
        : slots.map((slot) => toRun(slot.run_id!)!);
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
  function refresh(decisionId: string, now: string, runId: string | null = null): void {
    const row = byId.get(decisionId) as DecisionRow;
    const record: DecisionRecord = {
      decision_id: decisionId,
      base: row.base ? (JSON.parse(row.base) as DecisionBase) : null,
      baseline: row.baseline ? (JSON.parse(row.baseline) as DecisionBaseline) : null,
      history: row.history ? (JSON.parse(row.history) as string[]) : [],
      slots: (slotsOf.all(decisionId, row.attempt) as SlotRow[]).map((slot) => ({
        test_spec_id: slot.test_spec_id,
        environment_id: slot.environment_id,
        run_id: slot.run_id,
        waiting: waitOf(slot),
      })),
      waivers: inForce.all(decisionId, now) as DecisionRecord["waivers"][number][],
    };
    const decided = judge.judgeDecision(record, facts, now);
    const reasons = JSON.stringify(decided.reasons);
    const changes = decided.changes && JSON.stringify(decided.changes);
    const isNew = lastEvent.get(decisionId) === 0;
    if (changes !== row.changes) saveChanges.run(changes, decisionId);
    if (!isNew && decided.status === row.status && reasons === row.reasons) return;
    saveState.run({ decision_id: decisionId, status: decided.status, reasons, now });
    appendEvent(decisionId, now, runId, "release_decision.updated", {
      status: decided.status,
      previous_status: isNew ? null : row.status,
      attempt: row.attempt,
      blocking: decided.reasons.filter((r) => r.blocking).length,
    });
  }

  /** Appends an event to a decision's, and queues its delivery to webhooks. */
  function appendEvent<T extends DecisionEventType>(
    decisionId: string,
    now: string,
    runId: string | null,
    type: T,
    data: DecisionEventData<T>,
  ): void {
    const sequence = (lastEvent.get(decisionId) as number) + 1;
    const eventId = makeIdGenerator({ now: () => new Date(now) })("event");
    insertEvent.run(decisionId, sequence, eventId, type, now, runId, JSON.stringify(data));
    outbox.enqueueDecisionEvent(decisionId, sequence, now);
  }

  /** Fills the current attempt's slot of each given (spec, environment) with the latest run of the subject that tests it. */
  function fillSlotsFromRuns(row: DecisionRow): void {
    for (const slot of slotsOf.all(row.decision_id, row.attempt) as SlotRow[]) {
      if (slot.run_id) continue;
      const runId = latestRunOf.get({
        ...slot,
        project_id: row.project_id,
        repository: row.repository,
        commit_sha: row.commit_sha,
        planned_by: row.planned_by,
      }) as string | undefined;
      if (runId) fillSlot.run({ ...slot, run_id: runId, spec_version: (toRun(runId) as RunRow).spec_version });
    }
  }

  function addSlots(decisionId: string, attempt: number, plan: readonly PlanSlot[]): void {
    plan.forEach((slot, position) =>
      insertSlot.run(
        decisionId,
        attempt,
        position,
        slot.test_spec_id,
        slot.environment_id,
        slot.spec_version ?? null,
        null,
        slot.executor ?? "service",
      ),
    );
  }

  /** Keeps what the decision is judged against (a pull request's base branch), with the baseline and history chosen from it now. */
  function setBase(row: Pick<DecisionRow, "decision_id" | "project_id" | "repository">, base: DecisionBase): void {
    const { baseline, history } = judge.chooseBaselineOf(
      { project_id: row.project_id, repository: row.repository! },
      base,
      facts,
    );
    saveBase.run({
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

  return {
    reads: {
      getDecision(decisionId: string): ReleaseDecision | undefined {
        const row = decisions.get(decisionId);
        return row && toDecision(row);
      },
      getDecisionForCommit(projectId: string, repository: string, commitSha: string): ReleaseDecision | undefined {
        const row = bySubject.get(projectId, repository, commitSha) as DecisionRow | undefined;
        return row && toDecision(row);
      },
      listDecisions(
        filter: {
          project_id?: string | undefined;
          repository?: string | undefined;
          commit_sha?: string | undefined;
          status?: DecisionStatus | undefined;
        },
        page: PageRequest,
      ): RowPage<ReleaseDecision> {
        const filters = (
          [
            ["project_id = ?", filter.project_id],
            ["repository = ?", filter.repository],
            ["commit_sha = ?", filter.commit_sha],
            ["status = ?", filter.status],
          ] as const
        ).filter(([, value]) => value !== undefined);
        const { rows, next } = listPage<DecisionRow>("release_decisions", "decision_id", filters, page);
        return { rows: rows.map(toDecision), next };
      },
      listDecisionEvents(decisionId: string, afterSequence: number, limit: number): DecisionEvent[] {
        return (eventsPage.all(decisionId, afterSequence, limit) as DecisionEventRow[]).map(toDecisionEvent);
      },
      getWaiver(decisionId: string, waiverId: string, now: string): Waiver | undefined {
        const row = waiverById.get(decisionId, waiverId) as WaiverRow | undefined;
        return row && toWaiver(row, now);
      },
      listWaivers(decisionId: string, after: string | undefined, limit: number, now: string): Waiver[] {
        return (waiversOf.all({ decision_id: decisionId, after: after ?? null, limit }) as WaiverRow[]).map((row) =>
          toWaiver(row, now),
        );
      },
      listPolicyApprovals(decisionId: string): PolicyApproval[] {
        return (approvalsOf.all(decisionId) as WaiverRow[]).map(toApproval);
      },
      getPolicyApproval(decisionId: string, approvalId: string): PolicyApproval | undefined {
        const row = (approvalsOf.all(decisionId) as WaiverRow[]).find((r) => r.waiver_id === approvalId);
        return row && toApproval(row);
      },
    },
    writes: {
      /**
       * Makes the decision, or finds the one of its commit. A commit's decision waits for `plan`, each
       * slot filled with the subject's latest run of that spec and environment if there is one.
       */
      createDecision(decision: NewDecision, now: string): { decision: ReleaseDecision; created: boolean } {
        const { subject } = decision;
        if ("repository" in subject) {
          const existing = bySubject.get(decision.project_id, subject.repository, subject.commit_sha) as
            DecisionRow | undefined;
          if (existing) return { decision: toDecision(existing), created: false };
        }
        const commit = "repository" in subject ? subject : { repository: null, commit_sha: null };
        insertDecision.run({
          decision_id: decision.decision_id,
          project_id: decision.project_id,
          ...commit,
          now,
          planned_by: "client",
        });
        if (decision.base && "repository" in subject) {
          setBase(
            { decision_id: decision.decision_id, project_id: decision.project_id, repository: subject.repository },
            decision.base,
          );
        }
        if ("run_ids" in subject) {
          subject.run_ids.forEach((runId, position) => {
            const run = toRun(runId)!;
            insertSlot.run(
              decision.decision_id,
              1,
              position,
              run.test_spec_id,
              run.environment_id,
              null,
              runId,
              run.executor,
            );
          });
        } else {
          addSlots(decision.decision_id, 1, decision.plan);
          fillSlotsFromRuns(byId.get(decision.decision_id) as DecisionRow);
        }
        refresh(decision.decision_id, now);
        return { decision: toDecision(byId.get(decision.decision_id) as DecisionRow), created: true };
      },
      /**
       * Makes or brings up to date a commit's decision as the GitHub App plans it. A decision a client
       * planned becomes the App's, in a new attempt that waits for the App's plan; a plan that changed,
       * or a re-run, starts a new attempt too; a base branch that became known (or moved) is taken, its
       * baseline chosen again. Whatever order the App learns things in, the decision ends up the same.
       */
      planAppDecision(plan: AppPlan, now: string): { decision: ReleaseDecision; created: boolean } {
        const existing = bySubject.get(plan.project_id, plan.subject.repository, plan.subject.commit_sha) as
          DecisionRow | undefined;
        if (!existing) {
          insertDecision.run({
            decision_id: plan.decision_id,
            project_id: plan.project_id,
            ...plan.subject,
            now,
            planned_by: "app",
          });
          const row = byId.get(plan.decision_id) as DecisionRow;
          if (plan.base) setBase(row, plan.base);
          addSlots(plan.decision_id, 1, plan.plan);
          fillSlotsFromRuns(byId.get(plan.decision_id) as DecisionRow);
          refresh(plan.decision_id, now);
          return { decision: toDecision(byId.get(plan.decision_id) as DecisionRow), created: true };
        }
        const current = slotsOf.all(existing.decision_id, existing.attempt) as SlotRow[];
        if (existing.planned_by !== "app") planByApp.run(existing.decision_id);
        if (existing.planned_by !== "app" || plan.rerun || planOf(current) !== planOf(plan.plan)) {
          raiseAttempt.run(now, existing.decision_id);
          addSlots(existing.decision_id, existing.attempt + 1, plan.plan);
          // A re-run waits for new runs; otherwise the App's runs of the plan, if it made them already, count.
          if (!plan.rerun) fillSlotsFromRuns(byId.get(existing.decision_id) as DecisionRow);
        }
        const storedBase = existing.base ? contentAddress(JSON.parse(existing.base)) : null;
        if (plan.base && contentAddress(plan.base) !== storedBase) setBase(existing, plan.base);
        refresh(existing.decision_id, now);
        return { decision: toDecision(byId.get(existing.decision_id) as DecisionRow), created: false };
      },
      /** Starts the subject's runs again: a new attempt waits for `plan` (the current one if not given), with no runs yet. */
      startDecisionAttempt(decisionId: string, plan: NewDecision["plan"] | undefined, now: string): ReleaseDecision {
        const row = byId.get(decisionId) as DecisionRow;
        const next: readonly PlanSlot[] = plan ?? (slotsOf.all(decisionId, row.attempt) as SlotRow[]);
        raiseAttempt.run(now, decisionId);
        addSlots(decisionId, row.attempt + 1, next);
        refresh(decisionId, now);
        return toDecision(byId.get(decisionId) as DecisionRow);
      },
      /** Records a waiver, refreshes the decision, and schedules its refresh when the waiver expires. */
      addWaiver(waiver: NewWaiver, now: string): Waiver {
        insertWaiver.run({
          ...waiver,
          revokes: null,
          created_by_key: waiver.created_by.key_id,
          created_by_login: waiver.created_by.github_login,
          created_at: now,
          policy_hash: null,
        });
        if (waiver.expires_at !== null) {
          jobs.enqueueJob({
            task: REFRESH_RELEASE_DECISION,
            job_key: `${REFRESH_RELEASE_DECISION}:${waiver.waiver_id}`,
            payload: { decision_id: waiver.decision_id },
            run_at: waiver.expires_at,
            max_attempts: 5,
          });
        }
        refresh(waiver.decision_id, now);
        return toWaiver(waiverById.get(waiver.decision_id, waiver.waiver_id) as WaiverRow, now);
      },
      /** Records an approval of the head's policy changes, and refreshes the decision. */
      approvePolicy(
        approval: Pick<NewWaiver, "decision_id" | "reason" | "created_by"> & { approval_id: string },
        now: string,
      ): PolicyApproval {
        const row = byId.get(approval.decision_id) as DecisionRow;
        insertWaiver.run({
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
        refresh(approval.decision_id, now);
        return toApproval(
          (approvalsOf.all(approval.decision_id) as WaiverRow[]).find((row) => row.waiver_id === approval.approval_id)!,
        );
      },
      /** Takes a waiver back with a record of its own; undefined if it was revoked already. */
      revokeWaiver(
        revocation: Omit<NewWaiver, "run_id" | "gate_id" | "expires_at"> & { revokes: string },
        now: string,
      ): Waiver | undefined {
        const target = waiverById.get(revocation.decision_id, revocation.revokes) as WaiverRow;
        if (target.revoked_by !== null) return undefined;
        insertWaiver.run({
          ...revocation,
          policy_hash: null,
          run_id: target.run_id,
          gate_id: target.gate_id,
          expires_at: null,
          created_by_key: revocation.created_by.key_id,
          created_by_login: revocation.created_by.github_login,
          created_at: now,
        });
        refresh(revocation.decision_id, now);
        return toWaiver(waiverById.get(revocation.decision_id, revocation.waiver_id) as WaiverRow, now);
      },
      /**
       * Says what a planned run waits for before it can start (a deployment, the agent to be ready):
       * the decision shows it, and gives up at the deadline set the first time (a wait is not
       * extended by saying it again). Returns the deadline; nothing happens (undefined) once the slot has its run.
       */
      waitForPlannedRun(wait: SlotWait, now: string): string | undefined {
        const row = byId.get(wait.decision_id) as DecisionRow | undefined;
        if (!row) return undefined;
        const set = waitInSlot.get({ ...wait, attempt: row.attempt }) as { wait_until: string } | undefined;
        if (!set) return undefined;
        jobs.enqueueJob({
          task: REFRESH_RELEASE_DECISION,
          job_key: `${REFRESH_RELEASE_DECISION}:${wait.decision_id}:${set.wait_until}`,
          payload: { decision_id: wait.decision_id },
          run_at: set.wait_until,
          max_attempts: 5,
        });
        refresh(wait.decision_id, now);
        return set.wait_until;
      },
      /** Decides again (a waiver expired, say). */
      refreshDecision(decisionId: string, now: string): void {
        if (byId.get(decisionId)) refresh(decisionId, now);
      },
      /** Decides again every decision that waits for this run: called when the run ends. */
      refreshDecisionsOfRun(runId: string, now: string): void {
        for (const decisionId of decisionsOfRun.all(runId) as string[]) refresh(decisionId, now, runId);
      },
    },
    /** When a run with a commit source is created: it fills its slot in that commit's decision, if the current attempt plans it. */
    linkRun(run: Run, now: string): void {
      if (!run.source) return;
      const row = bySubject.get(run.project_id, run.source.repository, run.source.commit_sha) as
        DecisionRow | undefined;
      if (!row) return;
      // The App's slots take only the App's own runs (a run a client started for the commit tests what the client chose),
      // or, in a slot that waits for one, an uploaded run.
      if (row.planned_by === "app" && run.executor === "service" && run.started_by !== GITHUB_APP_KEY_ID) return;
      const filled = fillSlot.run({
        decision_id: row.decision_id,
        attempt: row.attempt,
        test_spec_id: run.test_spec_id,
        environment_id: run.environment_id,
        spec_version: run.spec_version,
        executor: run.executor,
        run_id: run.run_id,
      });
      if (filled.changes > 0) refresh(row.decision_id, now, run.run_id);
    },
  };
}
