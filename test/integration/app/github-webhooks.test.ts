import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { spawnService, type ChildService } from "../../helpers/child-service.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import { waitFor } from "../../helpers/wait.js";

const require = createRequire(import.meta.url);
const examples = require("@octokit/webhooks-examples") as { name: string; examples: { action?: string }[] }[];
const checkSuiteRequested = examples
  .find((e) => e.name === "check_suite")!
  .examples.find((e) => e.action === "requested")!;

describe("GitHub App hosting", () => {
  let dir: string;
  let service: ChildService;
  let github: GitHubStandIn;
  const SECRET = () => github.webhookSecret;
  const sign = (body: string, secret = SECRET()) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-github-"));
    github = await startGitHubStandIn();
    service = await spawnService({
      ASSURE_DB: join(dir, "assure.db"),
      ASSURE_BASE_URL: "https://assure.example.test",
      ...github.env,
    });
  });
  afterAll(async () => {
    await service.kill();
    await github.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const deliver = (body: string, signature: string, event = "check_suite") =>
    fetch(`${service.baseUrl}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": event,
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": signature,
      },
      body,
    });

  it("verifies and receives a signed webhook on the same port as /v1", async () => {
    const body = JSON.stringify(checkSuiteRequested);
    const response = await deliver(body, sign(body));
    expect(response.status).toBe(200);
    // Kept and answered at once; processed after: a repository GitHub does not know is not gated.
    await waitFor(
      () => service.logs.some((line) => line.includes("Hello-World") && line.includes("not gated")),
      "the App to process the delivery",
    );
    expect(github.problems).toEqual([]);
  });

  it("refuses a webhook whose signature does not match", async () => {
    const body = JSON.stringify(checkSuiteRequested);
    const response = await deliver(body, sign(body, "another-secret"));
    expect(response.status).toBe(400);
  });

  it("serves /v1 and health beside the webhook route", async () => {
    expect((await fetch(`${service.baseUrl}/healthz`)).status).toBe(200);
    const runs = await fetch(`${service.baseUrl}/v1/runs`);
    expect(runs.status).toBe(401);
    expect(((await runs.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
  });

  it("says the GitHub integration is on", () => {
    expect(service.logs.join("\n")).toContain("GitHub integration on");
  });
});

describe("without GitHub App settings", () => {
  it("starts, serves /v1 and says the integration is off", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-nogithub-"));
    const service = await spawnService({ ASSURE_DB: join(dir, "assure.db") });
    try {
      expect(service.logs.join("\n")).toContain("GitHub integration off");
      expect((await fetch(`${service.baseUrl}/v1/openapi.json`)).status).toBe(200);
      const webhook = await fetch(`${service.baseUrl}/api/github/webhooks`, {
        method: "POST",
        body: "{}",
        headers: { "content-type": "application/json" },
      });
      expect(webhook.status).toBe(404);
    } finally {
      await service.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps the integration off without ASSURE_BASE_URL, saying why: check runs link to the evidence there", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-nobase-"));
    const github = await startGitHubStandIn();
    const service = await spawnService({ ASSURE_DB: join(dir, "assure.db"), ...github.env });
    try {
      expect(service.logs.join("\n")).toMatch(/GitHub integration off: set ASSURE_BASE_URL/);
    } finally {
      await service.kill();
      await github.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses to start with half a GitHub configuration, naming what is missing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-halfgithub-"));
    try {
      await expect(spawnService({ ASSURE_DB: join(dir, "assure.db"), APP_ID: "1" })).rejects.toThrow(/WEBHOOK_SECRET/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("GitHub App hosting with a private key that is not one", () => {
  it("does not start, naming the setting", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-github-"));
    const github = await startGitHubStandIn();
    try {
      await expect(
        spawnService({
          ASSURE_DB: join(dir, "assure.db"),
          ASSURE_BASE_URL: "https://assure.example.test",
          ...github.env,
          PRIVATE_KEY: Buffer.from("not a key").toString("base64"),
        }),
      ).rejects.toThrow(/PRIVATE_KEY is not the App's private key/);
    } finally {
      await github.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
