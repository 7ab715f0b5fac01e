import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { runCli } from "../../helpers/child-service.js";

describe("signed links to the evidence pages", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let p: SeededProject;
  let other: SeededProject;
  let runId: string;
  const clock = new FakeClock(Date.parse("2026-11-23T09:00:00Z"));

  beforeAll(async () => {
    t = await startTestService({ clock, env: { ASSURE_WORKERS: "2", ASSURE_PAGE_LINK_TTL_SECONDS: "3600" } });
    agent = await startExampleAgent();
    p = await seedProject(t, agent.baseUrl, {
      model: "refund-agent+wrong-arguments",
      specYaml: deterministicSpecYaml({ repeat: 2 }),
    });
    other = await seedProject(t, agent.baseUrl, { specYaml: deterministicSpecYaml({ repeat: 1 }) });
    runId = (await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId })).run_id;
    await waitForRun(p.client, runId);
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  const open = (path: string) => fetch(`${t.baseUrl}${path}`, { redirect: "manual" });

  it("gives each run a signed page link that opens it without a key, with the headers of a page", async () => {
    const run = (await p.client.get(`/v1/runs/${runId}`)).body;
    expect(run.links.html).toMatch(new RegExp(`^/runs/${runId}\\?exp=\\d+&sig=[\\w-]{43}$`));
    const exp = Number(new URL(run.links.html, t.baseUrl).searchParams.get("exp"));
    expect(exp).toBe(Math.floor(clock.now().getTime() / 1000) + 3600);
    const page = await open(run.links.html);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await page.text();
    expect(html).toContain(`<span class="verdict FAIL">FAIL</span>`);
    expect(html).toMatch(/<tr id="gate-DET"><td><code>DET<\/code>.*<span class="failed">failed<\/span>/s);
    expect(html).not.toMatch(/<script/i);
    // The list and the decision carry one too.
    const listed = (await p.client.get(`/v1/runs?project_id=${p.projectId}`)).body.data[0];
    expect(listed.links.html).toMatch(/^\/runs\/run_\w+\?exp=\d+&sig=/);
  });

  it("answers 404, the same page for all, to a changed, expired or foreign link, or a run that does not exist", async () => {
    const link = (await p.client.get(`/v1/runs/${runId}`)).body.links.html as string;
    const notFound = async (path: string) => {
      const page = await open(path);
      expect([path, page.status]).toEqual([path, 404]);
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
      return page.text();
    };
    const sig = new URL(link, t.baseUrl).searchParams.get("sig")!;
    const flipped = sig.slice(0, -1) + (sig.endsWith("A") ? "B" : "A");
    const body = await notFound(link.replace(sig, flipped));
    expect(await notFound(link.replace(/exp=(\d+)/, (_, exp) => `exp=${Number(exp) + 1}`))).toBe(body);
    expect(await notFound(`/runs/${runId}`)).toBe(body);
    expect(await notFound(link.replace(runId, "run_doesnotexist"))).toBe(body);
    // Another project's run, with this project's signature: foreign.
    const foreign = (
      await startRun(other.client, { test_spec_id: other.testSpecId, environment_id: other.environmentId })
    ).run_id;
    expect(await notFound(link.replace(runId, foreign))).toBe(body);
    // Expired: an hour and a second later.
    clock.advance(3601_000);
    expect(await notFound(link)).toBe(body);
    expect((await open((await p.client.get(`/v1/runs/${runId}`)).body.links.html)).status).toBe(200);
  });

  it("revokes every link when an operator rotates the key (assure pages rotate-link-secret)", async () => {
    const link = (await p.client.get(`/v1/runs/${runId}`)).body.links.html as string;
    expect((await open(link)).status).toBe(200);
    const rotated = await runCli(["pages", "rotate-link-secret"], { ASSURE_DB: t.dbPath });
    expect([rotated.status, rotated.json().rotated]).toEqual([0, "page_link_secret"]);
    expect((await open(link)).status).toBe(404);
    expect((await open((await p.client.get(`/v1/runs/${runId}`)).body.links.html)).status).toBe(200);
  });

  it("serves the stylesheet from the service itself", async () => {
    const css = await open("/assets/page.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toContain("prefers-color-scheme: dark");
  });

  it("serves a badge of a branch's latest decision only for a project that publishes it", async () => {
    const repository = { github_id: 4242, full_name: "acme/refunds" };
    const badge = () => open(`/badges/${p.projectId}/4242.svg?branch=main`);
    await t.admin.patch(`/v1/projects/${p.projectId}`, { repositories: [repository] });
    expect((await badge()).status).toBe(404); // not published

    const published = await t.admin.patch(`/v1/projects/${p.projectId}`, { public_badge: true });
    expect(published.body).toMatchObject({ public_badge: true, repositories: [repository] });
    const none = await badge();
    expect([none.status, none.headers.get("content-type")]).toEqual([200, "image/svg+xml; charset=utf-8"]);
    expect(await none.text()).toContain("<title>assure: no decision</title>");

    const ci = t.admin.withToken(
      await t.issueKey(p.projectId, ["runs:execute", "runs:read", "releases:read", "releases:write"]),
    );
    const commit_sha = "b".repeat(40);
    await ci.post("/v1/release-decisions", {
      subject: { repository: repository.full_name, commit_sha },
      plan: [{ test_spec_id: p.testSpecId, environment_id: p.environmentId }],
    });
    const run = await ci.post(
      "/v1/runs",
      {
        test_spec_id: p.testSpecId,
        environment_id: p.environmentId,
        source: { repository: repository.full_name, commit_sha, ref: "refs/heads/main" },
      },
      { headers: { "idempotency-key": "badge-main" } },
    );
    await waitForRun(ci, run.body.run_id);
    const blocked = await badge();
    const svg = await blocked.text();
    expect(svg).toContain("<title>assure: release blocked</title>");
    expect(svg).not.toMatch(/<script|href=/);
    expect(blocked.headers.get("cache-control")).toBe("no-cache, max-age=0");
    expect(await (await open(`/badges/${p.projectId}/4242.svg?branch=develop`)).text()).toContain("no decision");
    // Another repository, another project's, or a name that is not a badge: 404.
    for (const path of [
      `/badges/${p.projectId}/999.svg`,
      `/badges/${other.projectId}/4242.svg`,
      `/badges/${p.projectId}/4242.png`,
    ]) {
      expect((await open(path)).status).toBe(404);
    }
  });
});
