import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { Redis } from "ioredis";
import { createService } from "../../../server/create-service.js";
import { readConfig } from "../../../server/config.js";
import { createLogger } from "../../../server/log.js";
import type { ApiResponse } from "../../helpers/api-client.js";
import { LOCAL_SETTINGS } from "../../helpers/local-settings.js";
import { TEST_DATABASE_URL, createScratchDatabase, withClient, type ScratchDatabase } from "../../helpers/postgres.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const REDIS_URL = process.env.ASSURE_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const PER_KEY = 6;

/** Two nodes of one cluster: two services on one PostgreSQL database, with `env` besides. */
async function startCluster(database: ScratchDatabase, env: Record<string, string> = {}) {
  const shared = {
    ASSURE_DATABASE_URL: database.url,
    ASSURE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    ASSURE_RATE_LIMIT_PER_MINUTE: String(PER_KEY),
    ...env,
  };
  const a = await startTestService({ env: shared });
  const b = await startTestService({ env: shared });
  return [a, b] as const;
}

/** One key's requests, alternating between the nodes: each answer's node, status and remaining budget. */
async function spreadAcross(nodes: readonly TestService[], token: string, requests: number) {
  const answers: { node: number; status: number; remaining: string | null }[] = [];
  for (let i = 0; i < requests; i++) {
    const node = i % nodes.length;
    const response: ApiResponse = await nodes[node]!.admin.withToken(token).get("/v1/projects");
    answers.push({ node, status: response.status, remaining: response.headers.get("x-ratelimit-remaining") });
  }
  return answers;
}

/** Exactly PER_KEY allowed in the window, counted down across both nodes; the rest refused on either. */
function expectCountedAcrossNodes(answers: Awaited<ReturnType<typeof spreadAcross>>) {
  const allowed = answers.slice(0, PER_KEY);
  expect(allowed.map(({ status }) => status)).toEqual(Array(PER_KEY).fill(200));
  expect(allowed.map(({ remaining }) => Number(remaining))).toEqual([5, 4, 3, 2, 1, 0]);
  const refused = answers.slice(PER_KEY);
  expect(refused.map(({ status }) => status)).toEqual(Array(refused.length).fill(429));
  expect(new Set(refused.map(({ node }) => node))).toEqual(new Set([0, 1]));
}

describe("rate limits shared by the nodes of a cluster", () => {
  let nodes: readonly TestService[] = [];
  let database: ScratchDatabase | undefined;
  afterEach(async () => {
    for (const node of nodes) await node.close();
    nodes = [];
    await database?.drop();
    database = undefined;
  });

  it("count in PostgreSQL: a key's budget is the cluster's, whichever node answers", async () => {
    database = await createScratchDatabase();
    nodes = await startCluster(database);
    expectCountedAcrossNodes(await spreadAcross(nodes, nodes[0]!.adminToken, PER_KEY + 4));
    // Another key has a budget of its own, on either node.
    const other = await nodes[0]!.issueKey(null);
    expect((await nodes[1]!.admin.withToken(other).get("/v1/projects")).status).toBe(200);
  });

  it("count in each node's memory while PostgreSQL's table does not answer, rather than refusing every request", async () => {
    database = await createScratchDatabase();
    nodes = await startCluster(database);
    await withClient(database, (client) => client.query("DROP TABLE assure_rate_limits"));
    const answers = await spreadAcross(nodes, nodes[0]!.adminToken, 2 * PER_KEY + 2);
    // Each node's own budget: PER_KEY on each, then refusals.
    expect(answers.filter(({ status }) => status === 200)).toHaveLength(2 * PER_KEY);
    expect(answers.slice(2 * PER_KEY).map(({ status }) => status)).toEqual([429, 429]);
  });

  it("start with a role that may not create tables once the counts' table exists", async () => {
    database = await createScratchDatabase();
    const key = { ASSURE_ENCRYPTION_KEY: randomBytes(32).toString("base64") };
    for (const node of await startCluster(database, key)) await node.close();
    const role = `assure_rows_only_${randomBytes(4).toString("hex")}`;
    await withClient(database, (client) =>
      client.query(`CREATE ROLE ${role} LOGIN;
        REVOKE CREATE ON SCHEMA public FROM PUBLIC;
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role};
        GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`),
    );
    const asRole = new URL(database.url);
    asRole.username = role;
    try {
      nodes = await startCluster({ ...database, url: asRole.toString() }, key);
      expectCountedAcrossNodes(await spreadAcross(nodes, nodes[0]!.adminToken, PER_KEY + 2));
    } finally {
      for (const node of nodes) await node.close();
      nodes = [];
      await database.drop();
      database = undefined;
      await withClient({ name: "postgres", url: TEST_DATABASE_URL, drop: async () => {} }, (client) =>
        client.query(`DROP ROLE IF EXISTS ${role}`),
      );
    }
  });

  describe("with ASSURE_REDIS_URL", () => {
    const prefix = `assure-test-${randomBytes(6).toString("hex")}:`;
    const redis = new Redis(REDIS_URL, { lazyConnect: true });
    const ourKeys = async () => {
      const keys: string[] = [];
      for await (const batch of redis.scanStream({ match: `${prefix}*` })) keys.push(...(batch as string[]));
      return keys;
    };
    beforeAll(() => redis.connect());
    afterEach(async () => {
      const keys = await ourKeys();
      if (keys.length > 0) await redis.del(...keys);
    });
    afterAll(() => redis.quit());

    it("count in Redis instead of the database: a key's budget is the cluster's", async () => {
      database = await createScratchDatabase();
      nodes = await startCluster(database, { ASSURE_REDIS_URL: REDIS_URL, ASSURE_REDIS_KEY_PREFIX: prefix });
      expectCountedAcrossNodes(await spreadAcross(nodes, nodes[0]!.adminToken, PER_KEY + 4));
      expect((await ourKeys()).some((key) => key.startsWith(`${prefix}per-key:`))).toBe(true);
      const tables = await withClient(database, (client) =>
        client.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'assure_rate_limits'"),
      );
      expect(tables.rowCount).toBe(0);
    });

    it("count in each node's memory while Redis does not answer, rather than refusing every request", async () => {
      // The nodes reach Redis through a proxy the test cuts.
      const sockets = new Set<Socket>();
      const proxy = createServer((client) => {
        const upstream = connect(Number(new URL(REDIS_URL).port || 6379), new URL(REDIS_URL).hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("error", () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      const proxied = `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      try {
        database = await createScratchDatabase();
        nodes = await startCluster(database, { ASSURE_REDIS_URL: proxied, ASSURE_REDIS_KEY_PREFIX: `${prefix}cut:` });
        proxy.close();
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => setTimeout(resolve, 200));
        const answers = await spreadAcross(nodes, nodes[0]!.adminToken, 2 * PER_KEY + 2);
        expect(answers.filter(({ status }) => status === 200)).toHaveLength(2 * PER_KEY);
        expect(answers.slice(2 * PER_KEY).map(({ status }) => status)).toEqual([429, 429]);
      } finally {
        proxy.close();
        for (const socket of sockets) socket.destroy();
      }
    });
  });

  it("refuses to start when Redis does not answer, naming the variable", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-test-"));
    try {
      const config = readConfig({
        ...LOCAL_SETTINGS,
        ASSURE_DB: join(dir, "assure.db"),
        ASSURE_WORKERS: "0",
        ASSURE_REDIS_URL: "redis://127.0.0.1:1",
      });
      await expect(createService(config, { log: createLogger({ level: "silent" }) })).rejects.toThrow(
        /Redis \(ASSURE_REDIS_URL\) does not answer/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
