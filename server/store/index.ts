import type { Clock } from "../clock.js";
import type { Run } from "../contract/index.js";
import { makeAgentsStore } from "./agents.js";
import { makeApiKeysStore } from "./api-keys.js";
import { openDb as openSqliteFile, type Db, type OpenDb, type OpenDbOptions } from "./db.js";
import { makeEnvironmentsStore } from "./environments.js";
import { migrate } from "./migrate.js";
import { makePager } from "./pagination.js";
import { makeProjectsStore } from "./projects.js";
import { makeRunsStore, type IdempotentRequest, type NewRun, type RunStatusChange } from "./runs.js";
import { PAGE_LINK_SECRET, getOrCreateSecret, makeSettingsStore } from "./settings.js";
import { openSealer, resealAll, scrubFreePages } from "./sealing.js";
import type { Sealer } from "../secrets/sealer.js";
import { makeTestSpecsStore } from "./test-specs.js";
import { makeJobsStore, type NewJob } from "./jobs.js";
import { makeEventsStore, type LoggedEvent } from "./events.js";
import { makeConversationsStore, type ConversationRow } from "./conversations.js";
import { makeEvaluationsStore } from "./evaluations.js";
import { makeFindingsStore } from "./findings.js";
import { makeReleaseDecisionsStore } from "./release-decisions.js";
import { chooseBaselineOf, judgeDecision, policyHashOf } from "../decisions/judge-decision.js";
import { makeGitHubStore } from "./github.js";
import { makePagesStore } from "./pages.js";
import { makeWebhooksStore } from "./webhooks.js";
import { makeAuditEventsStore } from "./audit-events.js";

export type { Keyset, PageRequest, RowPage } from "./pagination.js";
export type { EnvironmentRow, EnvironmentTarget } from "./environments.js";
export type { RunRow } from "./runs.js";
export type { ApiKeyRow, ApiKeyInfo } from "./api-keys.js";
export type { ClaimedJob, JobClaim, JobRow, NewJob } from "./jobs.js";
export type { EventRow, LoggedEvent } from "./events.js";
export { SequenceConflictError, toLoggedEvent } from "./events.js";
export type { ConversationRow, ConversationView } from "./conversations.js";
export type { CaseTally } from "./pages.js";
export type { AttemptRow, DeliveryRow, WebhookRow } from "./webhooks.js";
export type { AuditEventFilter, AuditEventRow } from "./audit-events.js";
export { toDecisionEvent, type DecisionEventRow } from "./release-decisions.js";
export type { GateResult, JudgeUsage } from "./evaluations.js";
export type { RunStatusChange } from "./runs.js";

export class RunMovedError extends Error {
  override name = "RunMovedError";
}

export interface OpenStoreOptions extends OpenDbOptions {
  clock: Clock;
  /** ASSURE_ENCRYPTION_KEY; without it, the key file beside the database (created on first start). */
  encryptionKey?: Buffer | undefined;
  /** The driver: better-sqlite3 on a file unless another is given (the Action's WebAssembly SQLite). */
  openDb?: OpenDb | undefined;
}

/**
 * The one door to persistence: every SQL statement of the service lives behind it. This is the
 * synchronous store of one connection, reads and writes alike (the operator's CLI and the writer
 * thread use it). The service reads through one and writes through its writer thread
 * (`openServiceStore`), where every method of `writes` is a command: a write is declared once.
 */
export function openStore(
  path: string,
  { clock, encryptionKey, openDb = openSqliteFile, ...dbOptions }: OpenStoreOptions,
) {
  const db = openDb(path, dbOptions);
  let sealer: Sealer;
  try {
    sealer = openSealer(db, path, encryptionKey);
    migrate(db, clock, { sealer });
  } catch (error) {
    db.close();
    throw error;
  }
  const listPage = makePager(db);
  const jobs = makeJobsStore(db);
  const webhooks = makeWebhooksStore(db, listPage, sealer);
  const decisions = makeReleaseDecisionsStore(db, listPage, jobs.writes, webhooks.writes, {
    judgeDecision,
    chooseBaselineOf,
    policyHashOf,
  });
  const runs = makeRunsStore(db, listPage, jobs.writes, decisions.linkRun);
  const eventsStore = makeEventsStore(db, webhooks.writes);
  const conversationsStore = makeConversationsStore(db);
  const parts = [
    makeProjectsStore(db, listPage),
    makeAgentsStore(db, listPage),
    makeEnvironmentsStore(db, listPage, sealer),
    makeTestSpecsStore(db, listPage),
    runs,
    jobs,
    eventsStore,
    conversationsStore,
    makeEvaluationsStore(db),
    makeFindingsStore(db),
    makeApiKeysStore(db),
    decisions,
    makeGitHubStore(db, jobs.writes),
    makeSettingsStore(db, sealer),
    makePagesStore(db),
    webhooks,
    makeAuditEventsStore(db, listPage),
  ] as const;
  const reads = {
    ...mergeOf(parts, "reads"),
    /** The schema version the database is migrated to. */
    schemaVersion(): number {
      return db.prepare("SELECT MAX(version) AS version FROM schema_migrations").pluck().get() as number;
    },
    /** Counts rows of every table: used by tests and operators to see that nothing was written. */
    countRows(): Record<string, number> {
      const tables = db.prepare(db.dialect.tableNames).pluck().all() as string[];
      return Object.fromEntries(
        tables.map((table) => [table, db.prepare(`SELECT COUNT(*) AS n FROM "${table}"`).pluck().get() as number]),
      );
    },
  };
  const writes = {
    ...mergeOf(parts, "writes"),
    /**
     * Moves a run from one status to the next. If it is no longer in `change.from` it throws, so
     * the write it is part of (the event that records the move, say) is undone.
     */
    /**
     * Creates an uploaded run (EVALUATING, its job enqueued to judge it) with its conversations and
     * their events, unless its idempotency key answers the request: all of it, or nothing.
     */
    createUploadedRun(
      request: IdempotentRequest,
      newRun: NewRun,
      job: NewJob,
      conversations: readonly ConversationRow[],
      events: readonly LoggedEvent[],
      maxQueued?: number,
    ): ReturnType<typeof runs.writes.createRunIdempotently> {
      return inTransaction(() => {
        const outcome = runs.writes.createRunIdempotently(request, newRun, job, maxQueued);
        if (outcome.kind !== "created") return outcome;
        for (const conversation of conversations) conversationsStore.writes.createConversation(conversation);
        eventsStore.writes.appendEvents(newRun.run_id, events);
        return outcome;
      }) as ReturnType<typeof runs.writes.createRunIdempotently>;
    },
    transitionRun(change: RunStatusChange): Run {
      const moved = runs.writes.updateRunStatus(change);
      if (!moved) {
        throw new RunMovedError(`Run ${change.run_id} is no longer ${change.from}; it was not moved to ${change.to}`);
      }
      return moved;
    },
  };
  const inTransaction = db.transaction((work: () => unknown) => work());
  return {
    db,
    reads,
    writes,
    ...reads,
    ...writes,
    /** The id of the key the database's secrets are sealed with. */
    get encryptionKeyId(): string {
      return sealer.keyId;
    },
    /**
     * Seals every secret again under `to`, atomically (within the caller's transaction, if any):
     * from then on only `to` opens them, so close this store after (its parts hold the old key).
     */
    resealSecrets(to: Sealer): number {
      return resealAll(db, sealer, to);
    },
    /** VACUUM and an emptied WAL: after a rotation, no old ciphertext survives in free pages. */
    scrubFreePages(): void {
      scrubFreePages(db);
    },
    /** Runs `work` in one transaction: all of its writes commit together, or none do. */
    transaction<T>(work: () => T): T {
      return inTransaction(work) as T;
    },
    cursorSecret: getOrCreateSecret(db, sealer, "cursor_secret"),
    /** Made once, so that page links can be signed; read each time they are (a rotation revokes them). */
    pageLinkSecret: getOrCreateSecret(db, sealer, PAGE_LINK_SECRET),
    close(): void {
      if (db.open) db.close();
    },
  };
}

type Part = { reads: object; writes: object };
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The `reads` (or `writes`) of every part of the store, as one object. */
function mergeOf<const P extends readonly Part[], K extends keyof Part>(
  parts: P,
  key: K,
): UnionToIntersection<P[number][K]> {
  return Object.assign({}, ...parts.map((part) => part[key])) as UnionToIntersection<P[number][K]>;
}

export type Store = ReturnType<typeof openStore>;
export type StoreReads = Store["reads"];
export type StoreWrites = Store["writes"];
export type { Db };
