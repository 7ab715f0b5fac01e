import { describe, expect, it } from "@jest/globals";
import { chooseBaseline } from "../../../server/changes/baseline.js";
import { flipRate } from "../../../server/changes/flakiness.js";

/** A first-parent chain from the merge base back, one commit a day. */
const chain = (length: number) =>
  Array.from({ length }, (_, i) => ({
    sha: `${String(i).padStart(2, "0")}${"a".repeat(38)}`,
    committed_at: new Date(Date.UTC(2026, 10, 23) - i * 86_400_000).toISOString(),
  }));

describe("the baseline of a pull request", () => {
  it("is the most recent decision at or before the merge base, with its age", () => {
    const commits = chain(10);
    const decided = new Map([
      [commits[3]!.sha, { decision_id: "dec_3", commit_sha: commits[3]!.sha }],
      [commits[6]!.sha, { decision_id: "dec_6", commit_sha: commits[6]!.sha }],
    ]);
    expect(chooseBaseline(commits, (sha) => decided.get(sha))).toEqual({
      found: true,
      decision_id: "dec_3",
      commit_sha: commits[3]!.sha,
      age_commits: 3,
      age_days: 3,
      warning: null,
    });
  });

  it("is the merge base's own decision when it has one", () => {
    const commits = chain(3);
    expect(
      chooseBaseline(commits, (sha) =>
        sha === commits[0]!.sha ? { decision_id: "dec_0", commit_sha: sha } : undefined,
      ),
    ).toMatchObject({ found: true, age_commits: 0, age_days: 0 });
  });

  it("warns when it is older than max_age_days", () => {
    const commits = chain(30);
    const baseline = chooseBaseline(commits, (sha) =>
      sha === commits[20]!.sha ? { decision_id: "dec_20", commit_sha: sha } : undefined,
    );
    expect(baseline).toMatchObject({
      found: true,
      age_days: 20,
      warning: expect.stringMatching(/20 days older than the merge base \(more than baseline.max_age_days, 14\)/),
    });
  });

  it("is not found past baseline.depth, nor without a merge base: it is never invented", () => {
    const commits = chain(80);
    const late = (sha: string) => (sha === commits[60]!.sha ? { decision_id: "dec_60", commit_sha: sha } : undefined);
    expect(chooseBaseline(commits, late)).toEqual({
      found: false,
      reason: expect.stringMatching(
        /^no decision on the base branch within 50 commit\(s\) of the merge base 00aaaaa \(baseline.depth 50\)/,
      ),
    });
    expect(chooseBaseline(commits, late, { depth: 61, max_age_days: 90 })).toMatchObject({
      found: true,
      decision_id: "dec_60",
      age_commits: 60,
      warning: null,
    });
    expect(chooseBaseline([], late)).toEqual({
      found: false,
      reason: "the merge base with the base branch is not known",
    });
  });
});

describe("the flip rate of a case over the base branch's history", () => {
  const run = (passed: boolean, version = "v1") => ({ version, passed });

  it("counts pass↔fail flips between consecutive runs of the same version", () => {
    expect(flipRate([run(true), run(false), run(true), run(true), run(false)])).toEqual({
      rate: 3 / 4,
      flips: 3,
      pairs: 4,
    });
    expect(flipRate([run(true), run(true), run(true)])).toEqual({ rate: 0, flips: 0, pairs: 2 });
  });

  it("does not count a change of the case's version as a flip, and has nothing to say without a pair", () => {
    expect(flipRate([run(true, "v1"), run(false, "v2"), run(false, "v2")])).toEqual({ rate: 0, flips: 0, pairs: 1 });
    expect(flipRate([run(true)])).toBeNull();
    expect(flipRate([])).toBeNull();
  });
});
