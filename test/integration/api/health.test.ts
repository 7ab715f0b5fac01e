import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startTestService, type TestService } from "../../helpers/service.js";

describe("health endpoints", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "1" } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("says at / what this is, with links to the API document, the schemas and health that all open", async () => {
    const home = await fetch(`${t.baseUrl}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toContain("text/html");
    expect(home.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await home.text();
    expect(html).toContain("<h1>assure</h1>");
    const links = [...html.matchAll(/href="(\/[^"]*)"/g)].map((m) => m[1]!);
    expect(links).toEqual(
      expect.arrayContaining(["/v1/openapi.json", "/v1/schemas/test-spec.json", "/healthz", "/readyz"]),
    );
    for (const link of links) expect([link, (await fetch(`${t.baseUrl}${link}`)).status]).toEqual([link, 200]);
  });

  it("answers /healthz while alive and /readyz while it may take traffic; /readyz says 503 once draining", async () => {
    expect(await (await fetch(`${t.baseUrl}/healthz`)).json()).toEqual({ status: "ok" });
    const ready = await fetch(`${t.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });

    await t.service.worker.stop(0);
    const engineStopped = await fetch(`${t.baseUrl}/readyz`);
    expect(engineStopped.status).toBe(503);
    expect(await engineStopped.json()).toEqual({ status: "unavailable", reasons: ["the run engine is not running"] });
    t.service.worker.start();

    t.service.drain();
    const draining = await fetch(`${t.baseUrl}/readyz`);
    expect(draining.status).toBe(503);
    expect(((await draining.json()) as { reasons: string[] }).reasons).toEqual(["draining: the service is stopping"]);
    expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
  });
});
