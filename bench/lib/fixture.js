// What the runs hang off, created through the service's own API, and a stand-in agent
// endpoint so that the service finds the environment ready.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { HOST } from "./processes.js";

/**
 * Every bench sets the limits it needs: these turn the rate limits off as the tests do, so a bench
 * measures the part it is about (the load bench measures the limiter on against these), open
 * loopback to egress (the benches' agents listen there), and lift the queued-runs quota above the
 * runs a bench queues at once.
 */
export const LOCAL_SETTINGS = {
  ...JSON.parse(readFileSync(new URL("../../test/helpers/local-settings.json", import.meta.url), "utf8")),
  ASSURE_MAX_QUEUED_RUNS: "1000000",
};

/** Answers GET /models as an OpenAI-compatible endpoint would; the service's readiness probe asks it. */
export function startAgentStub() {
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/models") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "bench-model", object: "model" }] }));
      return;
    }
    res.writeHead(404).end();
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => {
      resolve({
        baseUrl: `http://${HOST}:${server.address().port}`,
        stop: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

/** `timeoutMs`: how long one request may take (a run's creation waits for the writer, which a busy node may have long in hand). */
export function makeApiClient(baseUrl, token, { timeoutMs = 10_000 } = {}) {
  return async function call(method, path, { body, contentType = "application/json", headers = {} } = {}) {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": contentType }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return { status: response.status, headers: response.headers, text, json: JSON.parse(text) };
  };
}

/** The request body and key that the replay case sends again and again. */
export const REPLAY_IDEMPOTENCY_KEY = "bench-replay-0001";

export function replayBody(fixture) {
  return {
    test_spec_id: fixture.testSpecId,
    environment_id: fixture.environmentId,
    source: {
      repository: "acme/refund-agent",
      commit_sha: "4f2c9a1e7b3d5f60718293a4b5c6d7e8f9012345",
      ref: "refs/pull/42/head",
      pull_request: 42,
    },
  };
}

/** Project, agent, environment, test spec and one run, all through the API. */
export async function createFixture(call, { agentBaseUrl, specPath }) {
  const project = await call("POST", "/v1/projects", { body: { name: "bench", description: "npm run bench" } });
  const projectId = project.json.project_id;
  const agent = await call("POST", "/v1/agents", {
    body: { project_id: projectId, name: "refund-agent", version: "1.4.0" },
  });
  const environment = await call("POST", "/v1/environments", {
    body: {
      project_id: projectId,
      name: "staging",
      agent_id: agent.json.agent_id,
      endpoint: { protocol: "openai-chat", base_url: agentBaseUrl, model: "bench-model" },
    },
  });
  const spec = await call("POST", `/v1/test-specs?project_id=${projectId}`, {
    body: readFileSync(specPath, "utf8"),
    contentType: "application/yaml",
  });
  const fixture = {
    projectId,
    agentId: agent.json.agent_id,
    agentVersion: agent.json.version,
    environmentId: environment.json.environment_id,
    testSpecId: spec.json.test_spec_id,
    specVersion: spec.json.spec_version,
  };
  const run = await call("POST", "/v1/runs", {
    body: replayBody(fixture),
    headers: { "idempotency-key": REPLAY_IDEMPOTENCY_KEY },
  });
  if (run.status !== 201) throw new Error(`The first POST /v1/runs answered ${run.status}, expected 201`);
  return { ...fixture, runId: run.json.run_id, runCreatedAt: run.json.created_at };
}

/**
 * A project of the bench's own: an agent, and an environment per named agent URL (each with room
 * for 64 calls at once). Returns their ids.
 */
export async function createBenchProject(call, name, agentUrls) {
  const project = (await call("POST", "/v1/projects", { body: { name } })).json.project_id;
  const agentId = (
    await call("POST", "/v1/agents", { body: { project_id: project, name: "refund-agent", version: "1.0.0" } })
  ).json.agent_id;
  const environments = {};
  for (const [environment, baseUrl] of Object.entries(agentUrls)) {
    environments[environment] = (
      await call("POST", "/v1/environments", {
        body: {
          project_id: project,
          name: environment,
          agent_id: agentId,
          endpoint: { protocol: "openai-chat", base_url: baseUrl, model: "refund-agent", max_concurrency: 64 },
        },
      })
    ).json.environment_id;
  }
  return { project, agentId, environments };
}

/** Starts a run and polls it (10 reads a second: no load to speak of) until it ends. */
export async function runToEnd(call, body, key, { timeoutMs = 10 * 60_000 } = {}) {
  const { json: created } = await call("POST", "/v1/runs", { body, headers: { "idempotency-key": key } });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { json: run } = await call("GET", `/v1/runs/${created.run_id}`);
    if (["COMPLETED", "INCONCLUSIVE", "FAILED"].includes(run.status)) return run;
    if (Date.now() > deadline) {
      throw new Error(`Run ${run.run_id} did not end within ${timeoutMs / 60_000} minutes (${run.status})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
