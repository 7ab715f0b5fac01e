import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { pullRequestEvent, type TestRepository } from "../../../examples/github/events.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import { unusedBaseUrl } from "../../helpers/agent-endpoint.js";
import { databaseBytes } from "../../helpers/database-files.js";
import { spawnService, type ChildService } from "../../helpers/child-service.js";
import { waitFor } from "../../helpers/wait.js";

const REPOSITORY: TestRepository = {
  id: 616161,
  full_name: "acme/new-app",
  default_branch: "main",
  installationId: 7070,
};

const unescapeHtml = (text: string) =>
  text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));

describe("registering the GitHub App in a click (the manifest flow)", () => {
  let dir: string;
  let github: GitHubStandIn;
  let env: Record<string, string>;
  let service: ChildService | undefined;
  let baseUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-setup-"));
    github = await startGitHubStandIn();
    github.addRepository(REPOSITORY);
    baseUrl = (await unusedBaseUrl()).replace(/\/v1$/, "");
    const { GHE_HOST, GHE_PROTOCOL } = github.env;
    env = {
      ASSURE_DB: join(dir, "assure.db"),
      PORT: new URL(baseUrl).port,
      ASSURE_BASE_URL: baseUrl,
      GHE_HOST,
      GHE_PROTOCOL,
      ASSURE_WORKERS: "1",
    };
  });
  afterAll(async () => {
    await service?.stop();
    await github.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates the App from the setup page, keeps its credentials sealed, and runs it from the next start", async () => {
    service = await spawnService(env);
    const announced = service.logs.find((line) => line.includes("/setup/github?token="))!;
    expect(announced).toContain("GitHub integration off: no GitHub App yet");
    const token = /\/setup\/github\?token=([\w-]+)/.exec(announced)![1]!;

    // Without the one-time token, the page does not open.
    for (const query of ["", "?token=wrong"]) {
      const refused = await fetch(`${baseUrl}/setup/github${query}`);
      expect(refused.status).toBe(401);
      expect(await refused.text()).toContain("one-time setup token");
    }

    // Step 1: the page's form posts the manifest to GitHub (here, for an organization).
    const page = await fetch(`${baseUrl}/setup/github?token=${token}&org=acme`);
    expect(page.status).toBe(200);
    const text = await page.text();
    const action = unescapeHtml(/<form method="post" action="([^"]+)"/.exec(text)![1]!);
    expect(action).toMatch(new RegExp(`^http://${github.host}/organizations/acme/settings/apps/new\\?state=[\\w-]+$`));
    const manifestJson = unescapeHtml(/name="manifest" value="([^"]+)"/.exec(text)![1]!);
    const manifest = JSON.parse(manifestJson);
    expect(manifest).toMatchObject({
      url: baseUrl,
      hook_attributes: { url: `${baseUrl}/api/github/webhooks`, active: true },
      redirect_url: `${baseUrl}/setup/github/callback`,
      public: false,
      default_permissions: {
        checks: "write",
        contents: "read",
        metadata: "read",
        pull_requests: "read",
        deployments: "read",
        statuses: "write",
      },
    });
    expect([...manifest.default_events].sort()).toEqual([
      "check_run",
      "check_suite",
      "deployment_status",
      "pull_request",
      "push",
    ]);

    // Step 2: GitHub creates the App and sends the browser back with a code.
    const created = await fetch(action, {
      method: "POST",
      body: new URLSearchParams({ manifest: manifestJson }),
      redirect: "manual",
    });
    expect(created.status).toBe(302);
    expect(github.manifests).toEqual([{ owner: "acme", manifest }]);
    // Step 3: the service trades the code for the App's credentials.
    const done = await fetch(created.headers.get("location")!);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain(`href="http://${github.host}/apps/assure/installations/new"`);
    expect(github.requests).toContainEqual(
      expect.objectContaining({
        method: "POST",
        path: expect.stringMatching(/^\/app-manifests\/[0-9a-f]+\/conversions$/),
      }),
    );

    // The token worked once; a code cannot be used twice either.
    expect((await fetch(`${baseUrl}/setup/github?token=${token}`)).status).toBe(410);
    expect((await fetch(created.headers.get("location")!)).status).toBe(400);

    // The credentials are sealed: neither the database file nor its WAL holds the key or the secret.
    const keyBody = github.privateKey.split("\n").slice(1, 3).join("");
    const bytes = databaseBytes(env.ASSURE_DB!);
    expect(bytes.includes(Buffer.from(keyBody))).toBe(false);
    expect(bytes.includes(Buffer.from(github.webhookSecret))).toBe(false);

    // The next start runs the App: deliveries are verified with its secret, and it signs in as it.
    expect(await service.stop()).toBe(0);
    service = await spawnService(env);
    expect(service.logs.some((line) => line.includes("GitHub integration on"))).toBe(true);
    expect(service.logs.some((line) => line.includes("/setup/github?token="))).toBe(false);
    expect((await fetch(`${baseUrl}/setup/github?token=${token}`)).status).toBe(404);
    const head = "9".repeat(40);
    github.commit(REPOSITORY.full_name, head, { "README.md": "no assure yet" });
    expect(
      (await github.deliver(baseUrl, "pull_request", pullRequestEvent(REPOSITORY, { head, base: head }))).status,
    ).toBe(200);
    await waitFor(
      () => github.requests.some((r) => r.path === `/app/installations/${REPOSITORY.installationId}/access_tokens`),
      "the App to sign in as its installation",
    );
    const forged = await fetch(`${baseUrl}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-github-delivery": "forged",
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
      },
      body: "{}",
    });
    expect(forged.status).toBeGreaterThanOrEqual(400);
    expect(github.problems).toEqual([]);
  });
});
