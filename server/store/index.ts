import type { Clock } from "../clock.js";
import type { Run } from "../contract/index.js";
import { makeAgentsStore } from "./agents.js";
import { makeApiKeysStore } from "./api-keys.js";
import { openDb as openSqliteFile, type Db, type OpenDb, type OpenDbOptions } from "./db.js";
import type { Sql } from "./sql/sql.js";
import { sqliteSql } from "./sql/sqlite-sql.js";
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
export { ClaimLostError, isClaimLost } from "./jobs.js";
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
  /** Refuse every write on this connection (the service's reading connection beside its writer thread). */
  readOnly?: boolean | undefined;
}

/**
 * Opens (creating and migrating if needed) the SQLite database at `path`: the store of one
 * connection, reads and writes alike (the operator's CLI and the writer thread use it). The
 * service reads through one and writes through its writer thread (`openServiceStore`).
 */
export async function openStore(
  path: string,
  { clock, encryptionKey, openDb = openSqliteFile, readOnly = false, ...dbOptions }: OpenStoreOptions,
): Promise<Store> {
  const db = openDb(path, dbOptions);
  try {
    const sealer = openSealer(db, path, encryptionKey);
    migrate(db, clock, { sealer });
    const store = await storeOn(sqliteSql(db), sealer, { scrubFreePages: () => scrubFreePages(db) });
    // A write on a reading connection would compete with the writer thread for SQLite's lock.
    if (readOnly) db.pragma("query_only = ON");
    return store;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * The one door to persistence: every SQL statement of the service lives behind it, on whichever
 * database `sql` reaches. Every read and write answers later (a promise): on PostgreSQL, across
 * the network. In the service, every method of `writes` is also a command its writer applies: a
 * write is declared once.
 */
export async function storeOn(sql: Sql, sealer: Sealer, { scrubFreePages }: { scrubFreePages(): void }) {
  const listPage = makePager(sql);
  const jobs = makeJobsStore(sql);
  const webhooks = makeWebhooksStore(sql, listPage, sealer);
  const decisions = makeReleaseDecisionsStore(sql, listPage, jobs.writes, webhooks.writes, {
    judgeDecision,
    chooseBaselineOf,
    policyHashOf,
  });
  const runs = makeRunsStore(sql, listPage, jobs.writes, decisions.linkRun);
  const eventsStore = makeEventsStore(sql, webhooks.writes);
  const conversationsStore = makeConversationsStore(sql);
  const parts = [
    makeProjectsStore(sql, listPage),
    makeAgentsStore(sql, listPage),
    makeEnvironmentsStore(sql, listPage, sealer),
    makeTestSpecsStore(sql, listPage),
    runs,
    jobs,
    eventsStore,
    conversationsStore,
    makeEvaluationsStore(sql),
    makeFindingsStore(sql),
    makeApiKeysStore(sql),
    decisions,
    makeGitHubStore(sql, jobs.writes),
    makeSettingsStore(sql, sealer),
    makePagesStore(sql),
    webhooks,
    makeAuditEventsStore(sql, listPage),
  ] as const;
  const reads = {
    ...mergeOf(parts, "reads"),
    /** The schema version the database is migrated to. */
    async schemaVersion(): Promise<number> {
      return (await sql.prepare("SELECT MAX(version) AS version FROM schema_migrations").pluck().get<number>())!;
    },
    /** Counts rows of every table: used by tests and operators to see that nothing was written. */
    async countRows(): Promise<Record<string, number>> {
      const counts: Record<string, number> = {};
      for (const table of await sql.prepare(sql.dialect.tableNames).pluck().all<string>()) {
        counts[table] = (await sql.prepare(`SELECT COUNT(*) AS count FROM "${table}"`).pluck().get<number>())!;
      }
      return counts;
    },
  };
  const writes = {
    ...mergeOf(parts, "writes"),
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
      return sql.transaction(async () => {
        const outcome = await runs.writes.createRunIdempotently(request, newRun, job, maxQueued);
        if (outcome.kind !== "created") return outcome;
        for (const conversation of conversations) await conversationsStore.writes.createConversation(conversation);
        await eventsStore.writes.appendEvents(newRun.run_id, events);
        return outcome;
      });
    },
    /**
     * Moves a run from one status to the next. If it is no longer in `change.from` it throws, so
     * the write it is part of (the event that records the move, say) is undone.
     */
    async transitionRun(change: RunStatusChange): Promise<Run> {
      const moved = await runs.writes.updateRunStatus(change);
      if (!moved) {
        throw new RunMovedError(`Run ${change.run_id} is no longer ${change.from}; it was not moved to ${change.to}`);
      }
      return moved;
    },
  };
  const cursorSecret = await getOrCreateSecret(sql, sealer, "cursor_secret");
  // Made once, so that page links can be signed; read each time they are (a rotation revokes them).
  const pageLinkSecret = await getOrCreateSecret(sql, sealer, PAGE_LINK_SECRET);
  return {
    sql,
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
    resealSecrets(to: Sealer): Promise<number> {
      return resealAll(sql, sealer, to);
    },
    /** VACUUM and an emptied WAL: after a rotation, no old ciphertext survives in free pages. */
    scrubFreePages,
    /** Runs `work` in one transaction: all of its writes commit together, or none do. */
    transaction<T>(work: () => Promise<T>): Promise<T> {
      return sql.transaction(work);
    },
    cursorSecret,
    pageLinkSecret,
    close(): Promise<void> {
      return sql.close();
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

export type Store = Awaited<ReturnType<typeof storeOn>>;
export type StoreReads = Store["reads"];
export type StoreWrites = Store["writes"];
export type { Db, Sql };
