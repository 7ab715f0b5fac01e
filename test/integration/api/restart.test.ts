import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startAgentEndpoint } from "../../helpers/agent-endpoint.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { makeResponseValidator, type OpenApiDocument } from "../../helpers/openapi.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { EXAMPLE_SPEC_YAML } from "../../helpers/seed.js";

describe("durability across a crash", () => {
  let dir: string;
  let env: Record<string, string>;
  let agent: Awaited<ReturnType<typeof startAgentEndpoint>>;
  let service: ChildService | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-restart-"));
    env = { ASSURE_DB: join(dir, "nested", "assure.db"), ASSURE_WORKERS: "0" };
    agent = await startAgentEndpoint();
  });
  afterAll(async () => {
    await service?.kill();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps every acknowledged write after kill -9 and a restart", async () => {
    const key = await runCli(["keys", "create", "--admin"], env);
    expect(key.status).toBe(0);
    service = await spawnService(env);
    const openapi = (await (await fetch(`${service.baseUrl}/v1/openapi.json`)).json()) as OpenApiDocument;
    const validate = makeResponseValidator(openapi);
    const admin = makeApiClient(service.baseUrl, validate, key.json().token);

    const acknowledged: { path: string; body: unknown }[] = [];
    const remember = (path: string, body: unknown) => acknowledged.push({ path, body });
    const project = (await admin.post("/v1/projects", { name: "durable" })).body;
    remember(`/v1/projects/${project.project_id}`, project);
    const agentRecord = (await admin.post("/v1/agents", { project_id: project.project_id, name: "a", version: "7" }))
      .body;
    remember(`/v1/agents/${agentRecord.agent_id}`, agentRecord);
    const environment = (
      await admin.post("/v1/environments", {
        project_id: project.project_id,
        name: "staging",
        agent_id: agentRecord.agent_id,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl },
      })
    ).body;
    remember(`/v1/environments/${environment.environment_id}`, environment);
    const spec = await admin.call("POST", `/v1/test-specs?project_id=${project.project_id}`, {
      body: EXAMPLE_SPEC_YAML,
      contentType: "application/yaml",
    });
    expect(spec.status).toBe(201);
    remember(`/v1/test-specs/${spec.body.test_spec_id}`, spec.body);
    const runs = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        admin.post(
          "/v1/runs",
          { test_spec_id: spec.body.test_spec_id, environment_id: environment.environment_id },
          {
            headers: { "idempotency-key": `crash-${i}` },
          },
        ),
      ),
    );
    for (const run of runs) {
      expect(run.status).toBe(201);
      remember(`/v1/runs/${run.body.run_id}`, run.body);
    }

    await service.kill();
    service = await spawnService(env);
    const after = makeApiClient(service.baseUrl, validate, key.json().token);
    // A page link is minted as a resource is read (its expiry counts from then): not stored, so left aside.
    const stored = (body: any) =>
      body?.links?.html
        ? { ...body, links: { ...body.links, html: expect.stringMatching(/^\/runs\/run_\w+\?exp=\d+&sig=/) } }
        : body;
    for (const { path, body } of acknowledged) {
      const read = await after.get(path);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(stored(body));
    }
    // The idempotency keys survived too: a replay after the crash returns the same run.
    const replay = await after.post(
      "/v1/runs",
      { test_spec_id: spec.body.test_spec_id, environment_id: environment.environment_id },
      {
        headers: { "idempotency-key": "crash-3" },
      },
    );
    expect(replay.status).toBe(200);
    expect(replay.body.run_id).toBe(runs[3]!.body.run_id);
    // Cursors survive a restart as well: the signing secret is stored with the data.
    const list = (await after.get("/v1/runs?limit=10")).body;
    expect((await after.get(`/v1/runs?limit=10&cursor=${encodeURIComponent(list.next_cursor)}`)).status).toBe(200);
  });

  it("stops cleanly on SIGTERM", async () => {
    service ??= await spawnService(env);
    expect(await service.stop()).toBe(0);
    service = undefined;
  });
});
