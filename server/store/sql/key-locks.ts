import type { Sql } from "./sql.js";

/** What a lock is taken on: each kind of name has its own space, so names of different kinds never collide. */
export type LockSpace = "fair key" | "idempotency key" | "project quota" | "run log" | "decision log";

// The first key of pg_advisory_xact_lock(int, int); the second is the name's hash. (The migration
// lock takes the one-bigint form, which PostgreSQL keeps apart from the two-int form.)
const SPACE_IDS: Record<LockSpace, number> = {
  "fair key": 1,
  "idempotency key": 2,
  "project quota": 3,
  "run log": 4,
  "decision log": 5,
};

/**
 * Locks on names held until the caller's transaction ends, for what several nodes on one
 * PostgreSQL database must do one at a time (count, then claim; read, then insert): PostgreSQL's
 * transaction-scoped advisory locks. Two names whose hashes collide merely take turns. On SQLite
 * there is nothing to lock: its one writer already runs write transactions one at a time.
 */
export interface KeyLocks {
  /** Waits until this transaction holds the lock on `name`. */
  lock(space: LockSpace, name: string): Promise<void>;
  /** Takes the lock on `name` unless another transaction holds it (then false, at once). */
  tryLock(space: LockSpace, name: string): Promise<boolean>;
}

export function makeKeyLocks(db: Sql): KeyLocks {
  if (db.kind === "sqlite") {
    return { lock: () => Promise.resolve(), tryLock: () => Promise.resolve(true) };
  }
  const lock = db.prepare("SELECT pg_advisory_xact_lock(CAST(? AS integer), hashtext(?))");
  const tryLock = db.prepare("SELECT pg_try_advisory_xact_lock(CAST(? AS integer), hashtext(?))").pluck();
  // Outside a transaction the lock would be let go as soon as it is taken: a mistake, not a lock.
  const inTransaction = () => {
    if (!db.inTransaction) throw new Error("A key lock is held by a transaction: take it in one");
  };
  return {
    async lock(space, name) {
      inTransaction();
      await lock.run(SPACE_IDS[space], name);
    },
    async tryLock(space, name) {
      inTransaction();
      return (await tryLock.get<boolean>(SPACE_IDS[space], name)) === true;
    },
  };
}
