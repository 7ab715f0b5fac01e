import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Browser, Page } from "playwright-core";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { HOSTILE_PAYLOADS } from "../../../examples/agent/policy.js";
import { pageLocationOf, pageUrlOf } from "../../../server/contract/index.js";
import { launchBrowser } from "../../helpers/browser.js";
import { startRun, waitForRun } from "../../helpers/runs.js";
import { EXAMPLE_SPEC_YAML, PROJECT_SCOPES, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/** Where the tests leave screenshots of the pages (the README points here). */
export const SCREENSHOTS = fileURLToPath(new URL("../../../test-output/screenshots/", import.meta.url));
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

describe("the evidence pages in a real browser", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "4" } });
    agent = await startExampleAgent();
    browser = await launchBrowser();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
    await agent.close();
  });

  /** A run of the example spec against the agent with these misbehaviours, and its decision. */
  async function decidedRun(model: string) {
    const p = await seedProject(t, agent.baseUrl, { model, specYaml: EXAMPLE_SPEC_YAML });
    const client = t.admin.withToken(
      await t.issueKey(p.projectId, [...PROJECT_SCOPES, "releases:read", "releases:write"]),
    );
    const { run_id } = await startRun(client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    await waitForRun(client, run_id);
    const run = (await client.get(`/v1/runs/${run_id}`)).body;
    const decision = (await client.post("/v1/release-decisions", { subject: { run_ids: [run_id] } })).body;
    const evidence = (await client.get(`/v1/runs/${run_id}/evidence`)).body;
    return { client, run, decision, evidence };
  }

  /** A page with a listener for what must never happen on it: a dialog (an injected script ran). */
  async function openPage(url: string): Promise<{ page: Page; dialogs: string[] }> {
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const response = await page.goto(`${t.baseUrl}${url}`);
    expect(response?.status()).toBe(200);
    return { page, dialogs };
  }

  it("shows a sloppy agent's failed gate, and every evidence ref of the API's evidence lands on a visible, highlighted element", async () => {
    // Sloppy, and leaking its instructions: failed gates, and findings citing the trace.
    const { run, evidence } = await decidedRun("refund-agent+wrong-arguments+leak-system-prompt");
    expect(evidence.findings.length).toBeGreaterThan(0);
    const { page } = await openPage(run.links.html);
    await expect(page.locator("#gate-DET .failed").textContent()).resolves.toBe("failed");
    await page.screenshot({ path: `${SCREENSHOTS}run-page.png` });

    const refs = [
      ...new Set<string>([
        ...evidence.gates.flatMap((g: { evidence_refs: string[] }) => g.evidence_refs),
        ...evidence.findings.flatMap((f: { evidence_refs: string[] }) => f.evidence_refs),
      ]),
    ];
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      const location = pageLocationOf(ref)!;
      expect([ref, location?.kind]).toEqual([ref, "run"]);
      await page.goto(`${t.baseUrl}${pageUrlOf(run.links.html, location)}`);
      if (location.anchor === null) continue;
      const target = page.locator(`[id="${location.anchor}"]`);
      await expect(target.isVisible()).resolves.toBe(true);
      // Highlighted: the element the link names is the page's :target.
      await expect(
        target.evaluate((element) => element.matches(":target") && getComputedStyle(element).outlineStyle !== "none"),
      ).resolves.toBe(true);
    }
    await page.close();
  });

  it("shows a decision's gates with links into the run's page", async () => {
    const { run, decision } = await decidedRun("refund-agent+wrong-arguments");
    const { page } = await openPage(decision.links.html);
    await expect(page.locator("h1 .verdict").textContent()).resolves.toBe("BLOCKED");
    await page.screenshot({ path: `${SCREENSHOTS}decision-page.png`, fullPage: true });
    // Each failed check by case, as written in the spec, at its line, with what the agent said and called.
    const rows = page.locator("table.failures tbody tr");
    expect(await rows.count()).toBeGreaterThan(0);
    const first = await rows.first().locator("td").allTextContents();
    expect(first[1]).toMatch(/^tool_called \{.*lookup_ord/);
    expect(first[2]).toMatch(/^line \d+$/);
    expect(first[3]).toMatch(/^failed/);
    expect(first[5]).toMatch(/^repeat \d+, turn \d+: said I could not find order .*; called lookup_order\(/);
    const evidence = rows.first().locator('a:has-text("evidence")');
    const href = (await evidence.getAttribute("href"))!;
    expect(href).toMatch(
      new RegExp(`/runs/${run.run_id}\\?exp=\\d+&sig=[\\w-]+&find=evaluation-\\w+#evaluation-\\w+$`),
    );
    const runLink = page.locator(`a:has-text("Run ${run.run_id}")`);
    await runLink.click();
    await page.waitForURL(new RegExp(`/runs/${run.run_id}\\?exp=`));
    await expect(page.locator("h1 code").textContent()).resolves.toBe(run.run_id);
    await page.close();
  });

  it("keeps what a hostile agent says as text: no script runs, no dialog, the payloads shown literally", async () => {
    const { run } = await decidedRun("refund-agent+hostile");
    const { page, dialogs } = await openPage(run.links.html);
    await page.waitForTimeout(200);
    expect(dialogs).toEqual([]);
    const text = (await page.locator("main").textContent())!;
    for (const payload of HOSTILE_PAYLOADS) expect(text).toContain(payload);
    await expect(page.locator("main script, main img, main a[href^='javascript:']").count()).resolves.toBe(0);
    await expect(page.evaluate(() => document.querySelectorAll("[onerror]").length)).resolves.toBe(0);
    await page.close();
    // The decision's page quotes the agent in its failures: as text too.
    const failing = await decidedRun("refund-agent+hostile+wrong-arguments");
    const opened = await openPage(failing.decision.links.html);
    await opened.page.waitForTimeout(200);
    expect(opened.dialogs).toEqual([]);
    await expect(opened.page.locator("table.failures .excerpt").count()).resolves.toBeGreaterThan(0);
    await expect(opened.page.locator("main script, main img, main a[href^='javascript:']").count()).resolves.toBe(0);
    await expect(opened.page.evaluate(() => document.querySelectorAll("[onerror]").length)).resolves.toBe(0);
    await opened.page.close();
  });

  it("has no serious or critical accessibility violation (axe-core) on either page", async () => {
    const { run, decision } = await decidedRun("refund-agent+wrong-arguments");
    // axe is injected as a script, which the pages' policy rightly forbids: this context alone bypasses it.
    const context = await browser.newContext({ bypassCSP: true });
    for (const link of [run.links.html, decision.links.html]) {
      const page = await context.newPage();
      await page.goto(`${t.baseUrl}${link}`);
      await page.addScriptTag({ content: AXE });
      const violations = await page.evaluate(async () => {
        const result = await (
          window as unknown as {
            axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> };
          }
        ).axe.run();
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
      });
      expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
    }
    await context.close();
  });

  it("reads on a phone and in the dark, and prints black on white", async () => {
    const { run } = await decidedRun("refund-agent+wrong-arguments");
    const context = await browser.newContext({ viewport: { width: 375, height: 800 }, colorScheme: "dark" });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}${run.links.html}`);
    // Nothing wider than the phone: long values wrap, tables scroll inside themselves.
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(375);
    await expect(page.evaluate(() => getComputedStyle(document.body).backgroundColor)).resolves.toBe("rgb(13, 17, 23)");
    await page.screenshot({ path: `${SCREENSHOTS}run-page-phone-dark.png` });
    await page.emulateMedia({ media: "print", colorScheme: "light" });
    await expect(page.evaluate(() => getComputedStyle(document.body).backgroundColor)).resolves.toBe(
      "rgb(255, 255, 255)",
    );
    await context.close();
  });
});
