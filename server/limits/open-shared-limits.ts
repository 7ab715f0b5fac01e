import { Redis } from "ioredis";
import { coerceError } from "../errors.js";
import type { Logger } from "../log.js";
import { rateLimitPool } from "../store/sql/postgres-sql.js";
import type { LimiterFor } from "./limits.js";
import { redisLimiterOf, sharedLimiterOf } from "./shared-limiters.js";

/** Where every node counts the limits, so that 600 a minute is 600 a minute for the cluster. */
export interface SharedLimits {
  readonly store: "redis" | "postgres";
  limiterFor: LimiterFor;
  close(): Promise<void>;
}

export interface SharedLimitsOptions {
  /** ASSURE_REDIS_URL: the limits count in Redis, whatever the database. */
  redisUrl: string | undefined;
  /** ASSURE_REDIS_KEY_PREFIX: before every key the limits write to Redis. */
  redisKeyPrefix: string;
  /** ASSURE_DATABASE_URL: without Redis, the limits count in PostgreSQL. */
  databaseUrl: string | undefined;
  log: Logger;
}

/** The store the nodes count the limits in; undefined on SQLite without Redis (one node: its memory). */
export async function openSharedLimits({
  redisUrl,
  redisKeyPrefix,
  databaseUrl,
  log,
}: SharedLimitsOptions): Promise<SharedLimits | undefined> {
  if (redisUrl) return openRedisLimits(redisUrl, redisKeyPrefix, log);
  if (!databaseUrl) return undefined;
  const pool = rateLimitPool(databaseUrl);
  try {
    return { store: "postgres", limiterFor: await sharedLimiterOf(pool), close: () => pool.end() };
  } catch (error) {
    await pool.end();
    throw error;
  }
}

async function openRedisLimits(url: string, keyPrefix: string, log: Logger): Promise<SharedLimits> {
  // Without the offline queue a count never waits for a reconnection: it is the node's own meanwhile.
  let started = false;
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    // A start whose Redis does not answer fails at once; later, it is tried again and again.
    retryStrategy: (attempt) => (started ? Math.min(attempt * 200, 2_000) : null),
  });
  let answering = true;
  redis.on("error", (error: Error) => {
    if (answering) {
      log.warn({ err: error }, "Redis does not answer: each node counts the rate limits alone until it does");
    }
    answering = false;
  });
  redis.on("ready", () => {
    if (!answering) log.info("Redis answers again: the rate limits count across nodes");
    answering = true;
  });
  try {
    await redis.connect();
    started = true;
  } catch (error) {
    redis.disconnect();
    throw new Error(`Redis (ASSURE_REDIS_URL) does not answer: ${coerceError(error).message}`, { cause: error });
  }
  return {
    store: "redis",
    limiterFor: redisLimiterOf(redis, keyPrefix),
    async close() {
      if (redis.status === "ready") await redis.quit();
      else redis.disconnect();
    },
  };
}
