import { describe, expect, it } from "@jest/globals";
import type { ReleaseDecision, Run } from "../../../server/contract/index.js";
import { makePageLinks } from "../../../server/pages/page-links.js";

const NOW = new Date("2026-11-23T09:00:00Z");

function linksCountingReads(key = Buffer.alloc(32, 7).toString("base64")) {
  const state = { reads: 0, key };
  const links = makePageLinks({
    secret: async () => {
      state.reads++;
      return state.key;
    },
    now: () => NOW,
    ttlSeconds: 3600,
  });
  return { links, state };
}

const run = (n: number) => {
  const self = `/v1/runs/run_${n}`;
  const links: Run["links"] = { self, evidence: "", conversations: "", trace: "", evaluations: "", findings: "" };
  return { run_id: `run_${n}`, project_id: "prj_1", links };
};
const decision = (n: number) => {
  const links: ReleaseDecision["links"] = { self: `/v1/release-decisions/dec_${n}`, events: "", waivers: "" };
  return { decision_id: `dec_${n}`, project_id: "prj_1", links };
};
const signatureOf = (html: string | undefined) => new URL(html!, "http://x").searchParams;

describe("page links of a page of runs or decisions", () => {
  it("links a page of runs with one read of the key, each link as linkRun mints it and opening its own run only", async () => {
    const { links, state } = linksCountingReads();
    const runs = [1, 2, 3].map(run);
    const linked = await links.linkRuns(runs);
    expect(state.reads).toBe(1);
    expect(linked).toEqual(await Promise.all(runs.map((r) => links.linkRun(r))));
    expect(linked.map((r) => r.links.self)).toEqual(runs.map((r) => r.links.self));
    for (const [i, r] of linked.entries()) {
      const params = signatureOf(r.links.html);
      expect(r.links.html!.startsWith(`/runs/run_${i + 1}?`)).toBe(true);
      expect(await links.verify("run", r.run_id, "prj_1", params.get("exp")!, params.get("sig")!)).toBe(true);
      expect(await links.verify("run", "run_9", "prj_1", params.get("exp")!, params.get("sig")!)).toBe(false);
    }
  });

  it("links a page of decisions with one read of the key", async () => {
    const { links, state } = linksCountingReads();
    const decisions = [1, 2].map(decision);
    const linked = await links.linkDecisions(decisions);
    expect(state.reads).toBe(1);
    expect(linked).toEqual(await Promise.all(decisions.map((d) => links.linkDecision(d))));
  });

  it("reads the key again for the next page: a rotation in between revokes the first page's links", async () => {
    const { links, state } = linksCountingReads();
    const [before] = await links.linkRuns([run(1)]);
    state.key = Buffer.alloc(32, 9).toString("base64");
    const [after] = await links.linkRuns([run(1)]);
    expect(state.reads).toBe(2);
    const old = signatureOf(before!.links.html);
    const current = signatureOf(after!.links.html);
    expect(await links.verify("run", "run_1", "prj_1", old.get("exp")!, old.get("sig")!)).toBe(false);
    expect(await links.verify("run", "run_1", "prj_1", current.get("exp")!, current.get("sig")!)).toBe(true);
  });
});
