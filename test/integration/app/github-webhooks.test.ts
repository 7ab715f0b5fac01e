import { createHmac, generateKeyPairSync, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { spawnService, type ChildService } from "../../helpers/child-service.js";
import { waitFor } from "../../helpers/wait.js";

const require = createRequire(import.meta.url);
const examples = require("@octokit/webhooks-examples") as { name: string; examples: { action?: string }[] }[];
const checkSuiteRequested = examples.find((e) => e.name === "check_suite")!.examples.find((e) => e.action === "requested")!;

const SECRET = "webhook-secret-for-tests";
const sign = (body: string, secret = SECRET) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

describe("GitHub App hosting", () => {
  let dir: string;
  let service: ChildService;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-github-"));
    const { privateKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    service = await spawnService({
      ASSURE_DB: join(dir, "assure.db"),
      APP_ID: "123456",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: SECRET,
    });
  });
  afterAll(async () => {
    await service.kill();
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
    await waitFor(() => service.logs.some((line) => line.includes("Received check_suite.requested")), "the App to log the delivery");
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
      const webhook = await fetch(`${service.baseUrl}/api/github/webhooks`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
      expect(webhook.status).toBe(404);
    } finally {
      await service.kill();
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
