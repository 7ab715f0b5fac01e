import { z } from "zod";
import { ConfigError } from "./errors.js";
import { parseEncryptionKey } from "./secrets/sealer.js";
import type { LimitSettings } from "./limits/limits.js";
import { DEFAULT_BODY_LIMIT, DEFAULT_SPEC_BODY_LIMIT } from "./http/body-limits.js";

const Port = z.coerce.number().int().min(0).max(65535);
const Duration = z.coerce.number().int().positive();
const Synchronous = z.enum(["FULL", "NORMAL", "EXTRA"]);

const EnvSchema = z.object({
  PORT: Port.default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  ASSURE_DB: z.string().min(1).default("./data/assure.db"),
  /** PostgreSQL instead of the SQLite file: postgres://user:password@host:port/database. */
  ASSURE_DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /** Connections this process keeps to PostgreSQL at most. */
  ASSURE_DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(1000).default(10),
  /** The rate limits count in Redis (redis:// or rediss://), shared by every node, whatever the database. */
  ASSURE_REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  ASSURE_REDIS_KEY_PREFIX: z.string().default("assure:"),
  ASSURE_BASE_URL: z.url().optional(),
  ASSURE_DB_SYNCHRONOUS: Synchronous.default("FULL"),
  /** The key that seals secrets at rest; without it, a key file beside the database. */
  ASSURE_ENCRYPTION_KEY: z
    .string()
    .transform(
      (text, ctx) =>
        parseEncryptionKey(text) ??
        (ctx.addIssue({ code: "custom", message: "must be 32 bytes in base64 or hex (openssl rand -base64 32)" }),
        z.NEVER),
    )
    .optional(),
  ASSURE_IDEMPOTENCY_WINDOW_HOURS: Duration.default(24),
  ASSURE_WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1),
  ASSURE_WEBHOOK_RATE_UNDER_LOAD: z.coerce.number().int().nonnegative().default(250),
  ASSURE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().nonnegative().default(1200),
  ASSURE_UNAUTHENTICATED_PER_MINUTE: z.coerce.number().int().nonnegative().default(120),
  ASSURE_PUBLIC_PER_MINUTE: z.coerce.number().int().nonnegative().default(600),
  ASSURE_GITHUB_WEBHOOKS_PER_MINUTE: z.coerce.number().int().nonnegative().default(6000),
  ASSURE_RUN_CREATES_PER_MINUTE: z.coerce.number().int().nonnegative().default(120),
  ASSURE_MAX_QUEUED_RUNS: z.coerce.number().int().positive().default(1000),
  ASSURE_HEADERS_TIMEOUT_MS: Duration.default(10_000),
  ASSURE_REQUEST_TIMEOUT_MS: Duration.default(60_000),
  ASSURE_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_BODY_LIMIT),
  ASSURE_MAX_SPEC_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_SPEC_BODY_LIMIT),
  /** OTLP export bytes being read or waiting to be read at once; past it an export is answered 429 with Retry-After. */
  ASSURE_OTLP_QUEUE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(16 * 1024 * 1024),
  ASSURE_PAGE_LINK_TTL_SECONDS: z.coerce.number().int().min(1).max(31_536_000).default(2_592_000),
  /** On SIGTERM, how long /readyz answers 503 while every other request is still served, before the service stops accepting. */
  ASSURE_SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  ASSURE_READINESS_TIMEOUT_MS: Duration.default(2000),
  ASSURE_READINESS_CACHE_MS: Duration.default(5000),
  /** Comma-separated hosts and CIDRs that agents and webhooks may be reached at; empty = any non-forbidden. */
  ASSURE_EGRESS_ALLOWLIST: z.string().default(""),
  /** Runs executed at once by this process; 0 turns the run engine off (the API still accepts runs). */
  ASSURE_WORKERS: z.coerce.number().int().min(0).max(256).default(4),
  ASSURE_WORKER_LEASE_MS: Duration.default(30_000),
  /** Conversations held at once by this process, across all its runs. */
  ASSURE_MAX_CONVERSATIONS: z.coerce.number().int().min(1).max(4096).default(64),
  /** Runs of one project executing at once, across every node; default: all workers but one, so another project always finds one. */
  ASSURE_MAX_RUNS_PER_PROJECT: z.coerce.number().int().min(1).max(256).optional(),
  /** Conversations of one project held at once by this process; default: all of ASSURE_MAX_CONVERSATIONS (shared fairly). */
  ASSURE_MAX_CONVERSATIONS_PER_PROJECT: z.coerce.number().int().min(1).max(4096).optional(),
  ASSURE_JUDGE_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  ASSURE_JUDGE_MODEL: z.string().min(1).optional(),
  ASSURE_JUDGE_API_KEY: z.string().min(1).optional(),
  ASSURE_JUDGE_TIMEOUT_MS: Duration.default(60_000),
  /** Workflows sign in with GitHub OIDC tokens from this issuer (GitHub Enterprise: its own). */
  ASSURE_OIDC_ISSUER: z.url().default("https://token.actions.githubusercontent.com"),
  ASSURE_OIDC_JWKS_URL: z.url().optional(),
  /** The audience workflows request tokens for; default ASSURE_BASE_URL. */
  ASSURE_OIDC_AUDIENCE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  APP_ID: z.string().optional(),
  PRIVATE_KEY: z.string().optional(),
  PRIVATE_KEY_PATH: z.string().optional(),
  WEBHOOK_SECRET: z.string().optional(),
  WEBHOOK_PATH: z.string().startsWith("/").default("/api/github/webhooks"),
  /** GitHub Enterprise Server (Probot's names): the API is at {GHE_PROTOCOL}://{GHE_HOST}/api/v3. */
  GHE_HOST: z.string().min(1).optional(),
  GHE_PROTOCOL: z.enum(["https", "http"]).default("https"),
  /** How often the App looks for check runs behind their decision (a run ended, a publish failed). */
  ASSURE_GITHUB_RECONCILE_MS: Duration.default(2000),
  /** Octokit retries a GitHub 5xx three times, after 1, 4 and 9 times this. */
  ASSURE_GITHUB_RETRY_BASE_MS: Duration.default(1000),
  /** How soon the App tries again to start runs whose agent was not ready (until the config's deployment_timeout). */
  ASSURE_GITHUB_WAIT_RETRY_MS: Duration.default(15_000),
});

export interface Config {
  port: number;
  host: string;
  dbPath: string;
  /** ASSURE_DATABASE_URL: the service runs on PostgreSQL, and ASSURE_DB is not used. Never logged (it may hold a password). */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** ASSURE_DB was set as well as ASSURE_DATABASE_URL: it is ignored, and the start says so. */
  dbPathIgnored: boolean;
  /** ASSURE_REDIS_URL: where the rate limits count (never logged: it may hold a password). */
  redisUrl: string | undefined;
  /** ASSURE_REDIS_KEY_PREFIX: before every key written to Redis (deployments sharing one Redis). */
  redisKeyPrefix: string;
  baseUrl: string | undefined;
  dbSynchronous: z.infer<typeof Synchronous>;
  /** ASSURE_ENCRYPTION_KEY, if set: never logged. */
  encryptionKey: Buffer | undefined;
  idempotencyWindowMs: number;
  /** Shortens webhook retries (tests: 0.001 turns 5 s into 5 ms). */
  webhookRetryScale: number;
  /** Webhook attempts started per second while the API is serving (0: no limit). */
  webhookRateUnderLoad: number;
  /** How long a signed link to a run's or a decision's page opens it. */
  pageLinkTtlSeconds: number;
  limits: LimitSettings;
  /** Request bodies at most this large; a test spec's route takes `maxSpecBytes`. */
  maxBodyBytes: number;
  maxSpecBytes: number;
  /** OTLP export bytes being read or waiting at once (ASSURE_OTLP_QUEUE_BYTES). */
  otlpQueueBytes: number;
  /** A slow client's deadlines: its headers, and its whole request. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  readinessTimeoutMs: number;
  readinessCacheMs: number;
  /** On SIGTERM: not ready at once, still serving for this long (a load balancer's health check notices), then stopping. */
  shutdownDelayMs: number;
  egressAllowlist: string[];
  workers: number;
  workerLeaseMs: number;
  maxConversations: number;
  /** Fair share among projects: runs of one project at once, conversations of one project at once. */
  maxRunsPerProject: number;
  maxConversationsPerProject: number;
  logLevel: z.infer<typeof EnvSchema>["LOG_LEVEL"];
  /** The LLM judge for spec metrics; undefined when none is configured. */
  judge: { baseUrl: string; model: string; apiKey: string | undefined; timeoutMs: number } | undefined;
  /** Workflows' secretless sign-in (GitHub OIDC); the audience is undefined when neither it nor ASSURE_BASE_URL is set. */
  oidc: { issuer: string; jwksUrl: string; audience: string | undefined };
  /** How the GitHub App works here, when it can (ASSURE_BASE_URL is set). */
  github: GitHubSettings | undefined;
  /** The App's credentials from the environment; without them, those the setup page stored are used. */
  githubCredentials: GitHubCredentials | undefined;
  /** Why the GitHub integration is off, when it is. */
  githubOff: string | undefined;
}

/** Who the App is: from the environment (Probot's names), or from the manifest flow. */
export interface GitHubCredentials {
  appId: string;
  privateKey: string | undefined;
  privateKeyPath: string | undefined;
  webhookSecret: string;
}

export type GitHubAppConfig = GitHubSettings & GitHubCredentials;

export interface GitHubSettings {
  webhookPath: string;
  /** The REST API's base URL: GitHub's, or a GitHub Enterprise Server's. */
  apiBaseUrl: string;
  /** GitHub's web address (github.com, or the Enterprise Server's host): where Apps are created. */
  webUrl: string;
  /** The service's public base URL: check runs link to the evidence there. */
  publicBaseUrl: string;
  reconcileMs: number;
  retryBaseMs: number;
  waitRetryMs: number;
}

/** Where the service keeps its data, fit for a log line: the SQLite file, or PostgreSQL's address without credentials. */
export function databaseLabel(config: Pick<Config, "dbPath" | "databaseUrl">): string {
  if (!config.databaseUrl) return config.dbPath;
  const url = new URL(config.databaseUrl);
  return `postgres://${url.host}${url.pathname}`;
}

/** The only reader of the process environment. Fails at boot and names every bad variable. */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  const blankAsUnset = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const parsed = EnvSchema.safeParse(blankAsUnset);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const e = parsed.data;
  if (e.ASSURE_DATABASE_URL && !e.ASSURE_ENCRYPTION_KEY) {
    throw new ConfigError(
      "Invalid configuration:\n  ASSURE_ENCRYPTION_KEY: required with ASSURE_DATABASE_URL — every node seals and opens secrets with the same key (openssl rand -base64 32)",
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dbPath: e.ASSURE_DB,
    databaseUrl: e.ASSURE_DATABASE_URL,
    databasePoolSize: e.ASSURE_DATABASE_POOL_SIZE,
    dbPathIgnored: e.ASSURE_DATABASE_URL !== undefined && blankAsUnset.ASSURE_DB !== undefined,
    redisUrl: e.ASSURE_REDIS_URL,
    redisKeyPrefix: e.ASSURE_REDIS_KEY_PREFIX,
    baseUrl: e.ASSURE_BASE_URL?.replace(/\/+$/, ""),
    dbSynchronous: e.ASSURE_DB_SYNCHRONOUS,
    encryptionKey: e.ASSURE_ENCRYPTION_KEY,
    idempotencyWindowMs: e.ASSURE_IDEMPOTENCY_WINDOW_HOURS * 3_600_000,
    pageLinkTtlSeconds: e.ASSURE_PAGE_LINK_TTL_SECONDS,
    limits: {
      perKeyPerMinute: e.ASSURE_RATE_LIMIT_PER_MINUTE,
      unauthenticatedPerMinute: e.ASSURE_UNAUTHENTICATED_PER_MINUTE,
      publicPerMinute: e.ASSURE_PUBLIC_PER_MINUTE,
      githubWebhooksPerMinute: e.ASSURE_GITHUB_WEBHOOKS_PER_MINUTE,
      runCreatesPerMinute: e.ASSURE_RUN_CREATES_PER_MINUTE,
      maxQueuedRuns: e.ASSURE_MAX_QUEUED_RUNS,
    },
    maxBodyBytes: e.ASSURE_MAX_BODY_BYTES,
    headersTimeoutMs: e.ASSURE_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.ASSURE_REQUEST_TIMEOUT_MS,
    maxSpecBytes: e.ASSURE_MAX_SPEC_BYTES,
    otlpQueueBytes: e.ASSURE_OTLP_QUEUE_BYTES,
    webhookRetryScale: e.ASSURE_WEBHOOK_RETRY_SCALE,
    webhookRateUnderLoad: e.ASSURE_WEBHOOK_RATE_UNDER_LOAD,
    readinessTimeoutMs: e.ASSURE_READINESS_TIMEOUT_MS,
    readinessCacheMs: e.ASSURE_READINESS_CACHE_MS,
    shutdownDelayMs: e.ASSURE_SHUTDOWN_DELAY_MS,
    egressAllowlist: e.ASSURE_EGRESS_ALLOWLIST.split(",")
      .map((entry) => entry.trim())
      .filter(Boolean),
    workers: e.ASSURE_WORKERS,
    workerLeaseMs: e.ASSURE_WORKER_LEASE_MS,
    maxConversations: e.ASSURE_MAX_CONVERSATIONS,
    maxRunsPerProject: e.ASSURE_MAX_RUNS_PER_PROJECT ?? Math.max(1, e.ASSURE_WORKERS - 1),
    maxConversationsPerProject: Math.min(
      e.ASSURE_MAX_CONVERSATIONS_PER_PROJECT ?? e.ASSURE_MAX_CONVERSATIONS,
      e.ASSURE_MAX_CONVERSATIONS,
    ),
    logLevel: e.LOG_LEVEL,
    judge: readJudgeConfig(e),
    oidc: {
      issuer: e.ASSURE_OIDC_ISSUER,
      jwksUrl: e.ASSURE_OIDC_JWKS_URL ?? `${e.ASSURE_OIDC_ISSUER.replace(/\/+$/, "")}/.well-known/jwks`,
      audience: (e.ASSURE_OIDC_AUDIENCE ?? e.ASSURE_BASE_URL)?.replace(/\/+$/, ""),
    },
    ...readGitHubAppConfig(e),
  };
}

function readJudgeConfig(e: z.infer<typeof EnvSchema>): Config["judge"] {
  if (!e.ASSURE_JUDGE_BASE_URL && !e.ASSURE_JUDGE_MODEL) return undefined;
  if (!e.ASSURE_JUDGE_BASE_URL || !e.ASSURE_JUDGE_MODEL) {
    throw new ConfigError("The LLM judge needs both ASSURE_JUDGE_BASE_URL and ASSURE_JUDGE_MODEL.");
  }
  return {
    baseUrl: e.ASSURE_JUDGE_BASE_URL,
    model: e.ASSURE_JUDGE_MODEL,
    apiKey: e.ASSURE_JUDGE_API_KEY,
    timeoutMs: e.ASSURE_JUDGE_TIMEOUT_MS,
  };
}

function readGitHubAppConfig(e: z.infer<typeof EnvSchema>): Pick<Config, "github" | "githubCredentials" | "githubOff"> {
  const hasKey = Boolean(e.PRIVATE_KEY || e.PRIVATE_KEY_PATH);
  const partial = Boolean(e.APP_ID || hasKey || e.WEBHOOK_SECRET);
  if (partial && (!e.APP_ID || !hasKey || !e.WEBHOOK_SECRET)) {
    const missing = [
      !e.APP_ID && "APP_ID",
      !hasKey && "PRIVATE_KEY or PRIVATE_KEY_PATH",
      !e.WEBHOOK_SECRET && "WEBHOOK_SECRET",
    ].filter(Boolean);
    throw new ConfigError(`GitHub App configuration is incomplete: missing ${missing.join(", ")}`);
  }
  const githubCredentials = partial
    ? {
        appId: e.APP_ID!,
        privateKey: e.PRIVATE_KEY,
        privateKeyPath: e.PRIVATE_KEY_PATH,
        webhookSecret: e.WEBHOOK_SECRET!,
      }
    : undefined;
  if (!e.ASSURE_BASE_URL) {
    const off = githubCredentials
      ? "set ASSURE_BASE_URL, the service's public address: check runs link to the evidence there"
      : "set ASSURE_BASE_URL, the service's public address, to create the App from the setup page (or set APP_ID, PRIVATE_KEY and WEBHOOK_SECRET too)";
    return { github: undefined, githubCredentials, githubOff: off };
  }
  const web = e.GHE_HOST ? `${e.GHE_PROTOCOL}://${e.GHE_HOST}` : "https://github.com";
  return {
    github: {
      webhookPath: e.WEBHOOK_PATH,
      apiBaseUrl: e.GHE_HOST ? `${web}/api/v3` : "https://api.github.com",
      webUrl: web,
      publicBaseUrl: e.ASSURE_BASE_URL.replace(/\/+$/, ""),
      reconcileMs: e.ASSURE_GITHUB_RECONCILE_MS,
      retryBaseMs: e.ASSURE_GITHUB_RETRY_BASE_MS,
      waitRetryMs: e.ASSURE_GITHUB_WAIT_RETRY_MS,
    },
    githubCredentials,
    githubOff: undefined,
  };
}
