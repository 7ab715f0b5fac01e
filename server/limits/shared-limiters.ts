import type { Redis } from "ioredis";
import type pg from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis } from "rate-limiter-flexible";
import { postgresTableExists } from "../store/sql/postgres-sql.js";
import type { LimiterFor } from "./limits.js";

/**
 * The counts' table, created by RateLimiterPostgres itself (CREATE TABLE IF NOT EXISTS) rather than
 * by a migration: migrations are the same on SQLite and PostgreSQL, held to it by the schema-parity
 * test, and this table would have no twin on SQLite; it is the library's, with its own columns,
 * and nothing but the library reads it. Nodes starting together may both create it: the library
 * takes the loser's error as "created".
 */
const TABLE = "assure_rate_limits";

/**
 * While the shared store does not answer, a node counts in its own memory (the same budget per
 * node) instead of refusing every request.
 */
const insurance = (points: number, duration: number) => new RateLimiterMemory({ points, duration });

/** The limits counted in PostgreSQL, on `pool` (a small pool of their own). Creates the table first if missing. */
export async function sharedLimiterOf(pool: pg.Pool): Promise<LimiterFor> {
  const tableCreated = await postgresTableExists(pool, TABLE);
  await new Promise<void>((resolve, reject) => {
    // Creates the table, and sweeps it: every 5 minutes it deletes the rows that expired an hour before.
    new RateLimiterPostgres(
      {
        storeClient: pool,
        storeType: "pool",
        tableName: TABLE,
        tableCreated,
        keyPrefix: "sweeper",
        points: 1,
        duration: 1,
        clearExpiredByTimeout: true,
      },
      (error) => (error ? reject(error) : resolve()),
    );
  });
  return (name) => (points, duration) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: "pool",
      tableName: TABLE,
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: name,
      points,
      duration,
      insuranceLimiter: insurance(points, duration),
    });
}

/** The limits counted in Redis, each key under `prefix` and its limit's name. */
export function redisLimiterOf(redis: Redis, prefix: string): LimiterFor {
  return (name) => (points, duration) =>
    new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}${name}`,
      points,
      duration,
      // A Redis that is not connected is not waited for: the count is the node's own meanwhile.
      rejectIfRedisNotReady: true,
      insuranceLimiter: insurance(points, duration),
    });
}
