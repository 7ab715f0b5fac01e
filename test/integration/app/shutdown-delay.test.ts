import { Agent, get, type IncomingHttpHeaders } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { deterministicSpecYaml, seedOverApi } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";

/** A GET on a connection `agent` keeps alive between requests. */
function getKeptAlive(agent: Agent, url: string, token: string) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
    get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (response) => {
      response.resume();
      response.once("end", () => resolve({ status: response.statusCode!, headers: response.headers }));
    }).once("error", reject);
  });
}

describe("ASSURE_SHUTDOWN_DELAY_MS", () => {
  let dir: string;
  let env: Record<string, string>;
  let agent: ExampleAgent;
  let service: ChildService | undefined;
  const keptAlive = new Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-shutdown-delay-"));
    env = { ASSURE_DB: join(dir, "assure.db") };
    agent = await startExampleAgent({ latencyMs: 0 });
  });
  afterAll(async () => {
    keptAlive.destroy();
    await service?.kill();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("on SIGTERM answers /readyz 503 at once while serving every other request (closing kept-alive connections) for the delay, claims no new run, then exits 0", async () => {
    const token = (await runCli(["keys", "create", "--admin"], env)).json().token as string;
    // Long enough for a handful of requests on a loaded machine: they are all sent at once after the signal.
    service = await spawnService({ ...env, ASSURE_WORKERS: "1", ASSURE_SHUTDOWN_DELAY_MS: "5000" });
    const client = makeApiClient(service.baseUrl, undefined, token);
    const fixture = await seedOverApi(client, { name: "delay", agentBaseUrl: agent.baseUrl });
    const body = {
      test_spec_id: await fixture.addSpec(deterministicSpecYaml({ repeat: 1 })),
      environment_id: fixture.environmentId,
    };
    const project = `${service.baseUrl}/v1/projects/${fixture.projectId}`;
    const before = await getKeptAlive(keptAlive, project, token);
    expect(before.status).toBe(200);
    expect(before.headers.connection).toBe("keep-alive");

    const exited = service.stop();
    const logs = service.logs;
    await waitFor(() => logs.some((line) => line.includes("Received SIGTERM; draining")), "the signal to be received");
    const [readyz, read, created] = await Promise.all([
      fetch(`${service.baseUrl}/readyz`),
      getKeptAlive(keptAlive, project, token),
      client.post("/v1/runs", body, { headers: { "idempotency-key": "during-the-delay" } }),
    ]);
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toEqual({ status: "unavailable", reasons: ["draining: the service is stopping"] });
    expect(read.status).toBe(200);
    // The client's next request opens a connection anew: behind a balancer, to another node.
    expect(read.headers.connection).toBe("close");
    expect(created.status).toBe(201);
    expect(await exited).toBe(0);

    // The run created during the delay was left for the next node: still queued.
    service = await spawnService({ ...env, ASSURE_WORKERS: "0" });
    const after = makeApiClient(service.baseUrl, undefined, token);
    expect((await after.get(`/v1/runs/${created.body.run_id}`)).body.status).toBe("QUEUED");
  });
});
