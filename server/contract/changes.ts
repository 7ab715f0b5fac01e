import { z } from "zod";
import { POLICY_GATE_ID } from "../specs/document.js";
import { CommitSha } from "./common.js";

/**
 * How a pull request's decision is judged against its base branch, as the base branch's
 * `.assure/config.yml` says: where to look for a baseline, when a case is flaky, and whether
 * what the head relaxes in the policy needs an approval.
 */
export const ChangeSettings = z
  .strictObject({
    baseline: z
      .strictObject({
        depth: z
          .number()
          .int()
          .min(1)
          .max(200)
          .default(50)
          .describe("First-parent commits from the merge base to look at for a decision"),
        max_age_days: z.number().positive().max(3650).default(14).describe("An older baseline carries a warning"),
      })
      .default({ depth: 50, max_age_days: 14 }),
    flaky: z
      .strictObject({
        threshold: z
          .number()
          .min(0)
          .max(1)
          .default(0.2)
          .describe("A case whose flip rate over the base branch's last 20 decisions is above this is flaky"),
        mode: z
          .enum(["report", "quarantine"])
          .default("report")
          .describe(
            "report: a flaky case blocks as usual, labelled with its history; quarantine: it does not block, and is listed",
          ),
      })
      .default({ threshold: 0.2, mode: "report" }),
    policy_changes: z
      .enum(["require_approval", "report"])
      .default("require_approval")
      .describe(
        "What the head removes or relaxes in the base branch's .assure/: blocks until approved (default), or is only listed",
      ),
    executed_outside_service: z
      .enum(["allow", "never"])
      .default("never")
      .describe(
        "Whether a run executed outside the service and uploaded (executor: local, `assure test --upload`) counts toward a commit's decision: never (default), or allow. The service judges an uploaded run's conversations itself either way",
      ),
  })
  .meta({ id: "ChangeSettings" });
export type ChangeSettings = z.infer<typeof ChangeSettings>;

export const DEFAULT_CHANGE_SETTINGS: ChangeSettings = ChangeSettings.parse({});

/** A commit of the base branch, as the compare and commits APIs give it. */
export const BaseCommit = z.strictObject({ sha: CommitSha, committed_at: z.iso.datetime({ offset: true }) });

/** What the head removes or relaxes in the base branch's policy. */
export const PolicyChange = z
  .strictObject({
    kind: z
      .enum(["removed", "loosened", "changed"])
      .describe("changed: a check whose definition changed, which may or may not be weaker"),
    where: z.string().min(1).max(500).describe("`.assure/config.yml: forks`, or `<spec name>: <path in the spec>`"),
    message: z.string().min(1).max(2000),
  })
  .meta({ id: "PolicyChange" });
export type PolicyChange = z.infer<typeof PolicyChange>;

/** The pseudo-gate of a decision whose head changes the policy: a policy approval lifts it. */
export const POLICY_GATE = POLICY_GATE_ID;

export const DecisionBase = z
  .strictObject({
    ref: z.string().min(1).max(255).optional().describe("The base branch, for people"),
    commits: z
      .array(BaseCommit)
      .min(1)
      .max(200)
      .describe(
        "The base branch's first-parent chain from the merge base (first) back, newest first: the baseline is looked for here",
      ),
    settings: ChangeSettings.default(DEFAULT_CHANGE_SETTINGS),
    policy_changes: z
      .array(PolicyChange)
      .max(1000)
      .default([])
      .describe("What the head removes or relaxes in the base branch's .assure/"),
  })
  .meta({ id: "DecisionBase" });
export type DecisionBase = z.infer<typeof DecisionBase>;

export const CaseClass = z.enum(["regressed", "improved", "inconclusive", "new", "removed"]);

/** How a case has behaved on the base branch: flaky when it flips between pass and fail too often. */
export const CaseFlakiness = z
  .object({
    flip_rate: z
      .number()
      .describe("Flips between consecutive decisions of the base branch's history over the pairs compared"),
    flips: z.number().int(),
    pairs: z.number().int(),
    history: z
      .string()
      .describe(
        "The case in each decision of the base branch's history, oldest first: P passed (every repeat), F failed, · not run or another version",
      ),
    quarantined: z.boolean().describe("flaky.mode is quarantine: its failures and regressions do not block"),
  })
  .meta({ id: "CaseFlakiness" });
export type CaseFlakiness = z.infer<typeof CaseFlakiness>;

const CaseTally = z.object({ passes: z.number().int(), runs: z.number().int(), mean_score: z.number().nullable() });

export const CaseChange = z
  .object({
    run_id: z.string(),
    base_run_id: z.string().nullable(),
    case_id: z
      .string()
      .describe("`<scenario> turns[i].expect[j]`, `<scenario> expect[j]`, `<scenario> metric <id>` or `<probe> probe`"),
    class: CaseClass,
    base: CaseTally.nullable(),
    head: CaseTally.nullable(),
    rate_drop: z.number().nullable().describe("Base pass rate minus head's"),
    rate_p: z.number().nullable().describe("One-sided p-value of Fisher's exact test, in the direction of the change"),
    score_drop: z.number().nullable().describe("Base mean score minus head's (judged metrics)"),
    score_p: z
      .number()
      .nullable()
      .describe("One-sided p-value of the Mann–Whitney U test, in the direction of the change"),
    more_repeats_to_settle: z
      .number()
      .int()
      .nullable()
      .describe("For an inconclusive drop: more repeats on each side that would settle it"),
    head_refs: z.array(z.string()),
    base_refs: z.array(z.string()),
    gate_ids: z.array(z.string()).describe("The gates whose no_regression covers it"),
    flaky: CaseFlakiness.nullable().describe("Set when the case is flaky on the base branch"),
  })
  .meta({ id: "CaseChange" });
export type CaseChange = z.infer<typeof CaseChange>;

export const DecisionBaseline = z
  .object({
    found: z.boolean(),
    decision_id: z.string().nullable(),
    commit_sha: z.string().nullable(),
    age_commits: z.number().int().nullable().describe("First-parent commits between the baseline and the merge base"),
    age_days: z.number().nullable(),
    warning: z.string().nullable().describe("Set when the baseline is older than baseline.max_age_days"),
    reason: z.string().nullable().describe("Why there is none"),
    merge_base_sha: z.string(),
  })
  .meta({ id: "DecisionBaseline" });
export type DecisionBaseline = z.infer<typeof DecisionBaseline>;

const FigureChange = z.object({
  base: z.number().nullable(),
  head: z.number().nullable(),
  change: z.number().nullable().describe("(head − base) / base; null when either is unknown or the base is 0"),
});

/** What a planned run used against its baseline's run: tokens, cost and the answers' p95 latency. */
export const UsageChange = z
  .object({
    run_id: z.string(),
    base_run_id: z.string(),
    tokens: FigureChange,
    cost_usd: FigureChange,
    latency_ms_p95: FigureChange,
  })
  .meta({ id: "UsageChange" });
export type UsageChange = z.infer<typeof UsageChange>;

export const DecisionChanges = z
  .object({
    counts: z.object({
      regressed: z.number().int(),
      improved: z.number().int(),
      unchanged: z.number().int(),
      inconclusive: z.number().int(),
      new: z.number().int(),
      removed: z.number().int(),
    }),
    cases: z.array(CaseChange).describe("Every case that is not unchanged, regressions first (at most 500)"),
    cases_left_out: z.number().int(),
    flaky: z
      .array(z.object({ run_id: z.string(), case_id: z.string(), ...CaseFlakiness.shape }))
      .describe("Every case of the planned runs that is flaky on the base branch, changed or not (at most 500)"),
    usage: z.array(UsageChange).describe("Per planned run compared with its baseline's run: tokens, cost, p95 latency"),
  })
  .meta({ id: "DecisionChanges" });
export type DecisionChanges = z.infer<typeof DecisionChanges>;
