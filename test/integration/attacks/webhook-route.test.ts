import { createHmac, randomUUID } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { pushEvent, type TestRepository } from "../../../examples/github/events.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

/**
 * The adversarial review's attacks on the GitHub webhook route (issue: "The gate holds"): anyone
 * on the internet can reach it, and only a valid signature makes a delivery GitHub's.
 */
const REPOSITORY: TestRepository = { id: 929292, full_name: "acme/hooked", default_branch: "main", installationId: 77 };
const MB = 1024 * 1024;

/** Posts to the webhook route over a raw connection: `length` bytes of body claimed, `send` bytes sent (chunked when no length is claimed). */
function post(
  baseUrl: string,
  { claimed, send, headers = {} }: { claimed?: number; send: number; headers?: Record<string, string> },
) {
  return new Promise<{ status: number; body: string; sentBeforeAnswer: number }>((resolve, reject) => {
    const url = new URL("/api/github/webhooks", baseUrl);
    let sent = 0;
    const req = request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
        ...(claimed !== undefined ? { "content-length": String(claimed) } : {}),
        ...headers,
      },
    });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      const answeredAt = sent;
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, sentBeforeAnswer: answeredAt }));
      res.on("error", () => resolve({ status: res.statusCode ?? 0, body, sentBeforeAnswer: answeredAt }));
    });
    // The service closes the connection once it has refused a body: status 0 when the answer was lost to that.
    req.on("error", (error) =>
      answered ? undefined : sent > 0 ? resolve({ status: 0, body: "", sentBeforeAnswer: sent }) : reject(error),
    );
    const chunk = Buffer.alloc(64 * 1024, 120);
    const pump = () => {
      while (sent < send) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

describe("attacks on the GitHub webhook route", () => {
  let github: GitHubStandIn;
  let t: TestService;

  beforeAll(async () => {
    github = await startGitHubStandIn();
    t = await startTestService({
      env: {
        ...github.env,
        ASSURE_BASE_URL: "https://assure.example.test",
        ASSURE_WORKERS: "2",
        ASSURE_GITHUB_RECONCILE_MS: "100",
      },
    });
    github.addRepository(REPOSITORY);
  });
  afterAll(async () => {
    await t.close();
    await github.close();
  });
  const deliveries = async () => (await t.service.store.countRows()).github_deliveries!;

  describe("finding 7: unbounded reads before authentication", () => {
    it("refuses a body GitHub would never send by its Content-Length, before reading it", async () => {
      const before = await deliveries();
      const refused = await post(t.baseUrl, { claimed: 150 * MB, send: 150 * MB });
      expect(refused.status).toBe(413);
      expect(JSON.parse(refused.body).error).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
      // Answered long before the body could have been read.
      expect(refused.sentBeforeAnswer).toBeLessThan(150 * MB);
      expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
      expect(await deliveries()).toBe(before);
    });

    it("cuts a chunked body off at 25 MB, and drops a smaller one whose signature does not verify", async () => {
      const before = await deliveries();
      const cut = await post(t.baseUrl, { send: 40 * MB });
      expect(cut.status).toBe(413);
      expect(cut.sentBeforeAnswer).toBeLessThan(40 * MB);
      const unsigned = await post(t.baseUrl, { send: MB });
      expect(unsigned.status).toBe(400);
      expect(JSON.parse(unsigned.body).error).toMatchObject({
        code: "VALIDATION_FAILED",
        details: [{ path: "headers.x-hub-signature-256" }],
      });
      expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
      expect(await deliveries()).toBe(before);
    });
  });

  describe("a second review: many unsigned bodies at once", () => {
    it("holds no more than two of GitHub's largest bodies unverified at once: the rest are refused while they stream", async () => {
      const answers = await Promise.all([1, 2, 3, 4].map(() => post(t.baseUrl, { send: 24 * MB })));
      const statuses = answers.map((a) => a.status);
      // Refused while streaming (429, or the connection closed on it), or read whole and dropped (400): never kept beyond the budget.
      expect(statuses.filter((status) => status === 429 || status === 0).length).toBeGreaterThanOrEqual(1);
      expect(statuses.every((status) => status === 400 || status === 429 || status === 0)).toBe(true);
      expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
    });
  });

  describe("finding 12: deliveries deduplicated on an unsigned header only", () => {
    it("processes the same signed push once under two delivery ids, and refuses an empty delivery id", async () => {
      const sha = "d".repeat(40);
      github.commit(REPOSITORY.full_name, sha, { "README.md": "no assure here" }, { branch: "main" });
      const payload = pushEvent(REPOSITORY, { after: sha, branch: "main" });
      const before = await deliveries();
      expect(
        (await github.deliver(t.baseUrl, "push", payload, { delivery: "00000000-0000-4000-8000-000000000001" })).status,
      ).toBe(200);
      expect(
        (await github.deliver(t.baseUrl, "push", payload, { delivery: "00000000-0000-4000-8000-000000000002" })).status,
      ).toBe(200);
      await waitFor(async () => (await t.service.store.countRows()).jobs === 0, "the delivery to be processed");
      expect(await deliveries()).toBe(before + 1);
      expect(await t.service.store.getDelivery("00000000-0000-4000-8000-000000000002")).toBeUndefined();

      const body = JSON.stringify(pushEvent(REPOSITORY, { after: "e".repeat(40), branch: "main" }));
      const empty = await fetch(`${t.baseUrl}/api/github/webhooks`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "push",
          "x-github-delivery": " ",
          "x-hub-signature-256": `sha256=${createHmac("sha256", github.webhookSecret).update(body).digest("hex")}`,
        },
        body,
      });
      expect(empty.status).toBe(400);
      expect((await empty.json()).error).toMatchObject({
        code: "VALIDATION_FAILED",
        details: [{ path: "headers.x-github-delivery" }],
      });
      expect(await deliveries()).toBe(before + 1);
    });
  });
});
