import { z } from "zod";
import {
  CommitSha,
  OwningProject,
  PageQuery,
  RepositoryName,
  ResourceId,
  Timestamp,
  caseInsensitive,
  extensible,
  uniqueItems,
  listOf,
} from "./common.js";
import { RunExecutor, RunStatus, Verdict } from "./runs.js";
import { ChangeSettings, DecisionBase, DecisionBaseline, DecisionChanges, PolicyChange } from "./changes.js";
import { typedEnvelope } from "./typed-events.js";
import { EXECUTOR_GATE_ID, RUN_GATE_ID } from "../specs/document.js";

/** PENDING while a planned run is missing or not terminal; then ALLOWED or BLOCKED, failing closed. */
export const DecisionStatus = z.enum(["PENDING", "ALLOWED", "BLOCKED"]);
export type DecisionStatus = z.infer<typeof DecisionStatus>;

const CommitSubjectFields = { repository: RepositoryName, commit_sha: CommitSha };
const RunsSubjectFields = {
  run_ids: uniqueItems(z.array(ResourceId).min(1).max(200), "a run is listed twice"),
};

/** What a decision is about: a commit of a repository, or a set of runs. */
export const DecisionSubject = z
  .union([z.object(CommitSubjectFields), z.object(RunsSubjectFields)])
  .meta({ id: "DecisionSubject" });
export type DecisionSubject = z.infer<typeof DecisionSubject>;

/** A run the decision waits for: a spec in an environment, and the run that tests it once there is one. */
export const PlannedRun = z.object({
  test_spec_id: z.string(),
  environment_id: z.string(),
  spec_version: z
    .string()
    .nullable()
    .describe(
      "The spec version the GitHub App planned (only its run of that version counts); null: the spec's run, whatever its version",
    ),
  executor: RunExecutor.describe(
    "service: the service executes its run; local: it waits for a run executed outside the service and uploaded (POST /v1/runs/uploads)",
  ),
  run_id: z.string().nullable().describe("null until the run is created"),
  waiting: z
    .object({ for: z.string(), until: Timestamp })
    .nullable()
    .describe(
      "What it waits for before its run can start (a deployment, the agent to be ready), and until when; then the decision gives up",
    ),
});
export type PlannedRun = z.infer<typeof PlannedRun>;

/**
 * How one gate of one run weighs in the decision. `status` is the gate's (passed, failed,
 * inconclusive), `waived` when a waiver lifts it, or for a run without gates: `pending` (not
 * terminal, or not created yet), `error` (it could not be judged: its pseudo-gate `run`),
 * `untested` (nothing was planned).
 */
export const DecisionReason = z
  .object({
    run_id: z.string().nullable(),
    gate_id: z.string().nullable(),
    status: extensible(
      z.enum(["passed", "failed", "inconclusive", "waived", "quarantined", "error", "pending", "untested"]),
    ).describe(
      "quarantined: a gate failed only on cases flaky on the base branch, with flaky.mode quarantine: it does not block",
    ),
    blocking: z.boolean().describe("Whether it keeps the decision from being ALLOWED"),
    reason: z.string(),
    evidence_refs: z.array(z.string()).describe("API paths, each readable with evidence:read"),
    baseline_evidence_refs: z
      .array(z.string())
      .describe(
        "For a gate judged against the base branch (no_regression): the baseline's evidence, beside the head's in evidence_refs",
      ),
    waiver_ref: z.string().nullable().describe("The waiver that lifts it, if one does"),
  })
  .meta({ id: "DecisionReason" });
export type DecisionReason = z.infer<typeof DecisionReason>;

export const DecisionRun = z.object({
  run_id: z.string(),
  test_spec_id: z.string(),
  environment_id: z.string(),
  status: RunStatus,
  verdict: Verdict,
  planned: z.boolean().describe("Whether the decision waits for it; other runs of the subject are shown, never decide"),
  executor: RunExecutor.describe("Where it was executed: by the service, or outside it and uploaded (local)"),
  uploaded_by: z.string().nullable().describe("For a run executed outside the service: the API key that uploaded it"),
  attempt: z.number().int().nullable().describe("The attempt it was planned in"),
  links: z.object({ run: z.string(), evidence: z.string() }),
});

export const ReleaseDecision = z
  .object({
    decision_id: z.string(),
    project_id: z.string(),
    status: DecisionStatus,
    subject: DecisionSubject,
    planned_by: z
      .enum(["app", "client"])
      .describe(
        "app: the GitHub App planned it from what GitHub says (the base branch's config and policy, the head's specs at their blob SHAs), and only the App's runs count; client: the client that made it named its plan and base (a project without the App)",
      ),
    attempt: z.number().int().describe("1, raised each time the subject's runs are started again"),
    planned: z.array(PlannedRun).describe("What the current attempt waits for"),
    reasons: z.array(DecisionReason),
    runs: z.array(DecisionRun),
    baseline: DecisionBaseline.nullable().describe(
      "null when the decision is not compared with a base branch (a push, or made without `base`)",
    ),
    changes: DecisionChanges.nullable().describe(
      "Case by case against the baseline, once the planned runs are judged; null without a baseline",
    ),
    policy_changes: z
      .array(PolicyChange)
      .describe("What the head removes or relaxes in the base branch's .assure/ (the pseudo-gate `policy`)"),
    change_settings: ChangeSettings.nullable().describe(
      "The base branch's settings the decision was judged by; null without `base`",
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
    decided_at: Timestamp.nullable().describe("When it last became ALLOWED or BLOCKED; null while PENDING"),
    links: z.object({
      self: z.string(),
      events: z.string(),
      waivers: z.string(),
      html: z
        .string()
        .optional()
        .describe(
          "The decision's page for people: a signed link (exp, sig) that opens it without an API key, read-only, minted as the decision is read",
        ),
    }),
  })
  .meta({ id: "ReleaseDecision" });
export type ReleaseDecision = z.infer<typeof ReleaseDecision>;

const Plan = uniqueItems(
  z
    .array(
      z.strictObject({
        test_spec_id: ResourceId,
        environment_id: ResourceId,
        executor: RunExecutor.optional().describe(
          "local: wait for a run of the commit executed outside the service and uploaded, instead of one the service executes (default service)",
        ),
      }),
    )
    .max(200),
  "a spec and environment is planned twice",
);

export const CreateDecisionBody = z
  .strictObject({
    project_id: OwningProject,
    subject: z.union([z.strictObject(CommitSubjectFields), z.strictObject(RunsSubjectFields)]),
    plan: Plan.optional().describe("For a commit: the runs (spec and environment) the decision waits for"),
    base: DecisionBase.optional().describe(
      "For a pull request's head: its base branch, to find the baseline and judge the change",
    ),
  })
  .meta({
    id: "CreateDecisionBody",
    // A decision on runs waits for those runs: no plan, no base (the two shapes exclude each other).
    anyOf: [
      { properties: { subject: { properties: { repository: true }, required: ["repository"] } } },
      { properties: { subject: { properties: { run_ids: true }, required: ["run_ids"] }, plan: false, base: false } },
    ],
  });
export type CreateDecisionBody = z.infer<typeof CreateDecisionBody>;

export const NewAttemptBody = z
  .strictObject({
    plan: Plan.optional().describe("What the new attempt waits for; the current plan again if left out"),
  })
  .meta({ id: "NewAttemptBody" });

export const DecisionQuery = PageQuery.extend({
  project_id: ResourceId.optional().describe("Filter by project (admin keys); a project key sees its own project"),
  repository: RepositoryName.optional(),
  commit_sha: CommitSha.optional(),
  status: caseInsensitive(DecisionStatus).optional().describe("Case-insensitive"),
});

export const ReleaseDecisionList = listOf(ReleaseDecision).meta({ id: "ReleaseDecisionList" });

/** Who made a waiver: an API key, or a GitHub user through the App. */
const Actor = z.object({ key_id: z.string().nullable(), github_login: z.string().nullable() });

/**
 * A gate of a run let through, or a waiver taken back: never edited or deleted. A revocation is a
 * record of its own (`revokes` names the waiver), with its own reason.
 */
export const Waiver = z
  .object({
    waiver_id: z.string(),
    decision_id: z.string(),
    run_id: z.string(),
    gate_id: z.string(),
    reason: z.string(),
    expires_at: Timestamp.nullable(),
    revokes: z.string().nullable().describe("For a revocation: the waiver it takes back"),
    revoked_by: z.string().nullable().describe("The revocation that took this waiver back, if any"),
    active: z.boolean().describe("Whether it lifts its gate now: a waiver, not revoked, not expired"),
    created_by: Actor,
    created_at: Timestamp,
  })
  .meta({ id: "Waiver" });
export type Waiver = z.infer<typeof Waiver>;

export const CreateWaiverBody = z
  .strictObject({
    run_id: ResourceId,
    gate_id: z
      .string()
      .min(1)
      .max(64)
      .describe(
        "A gate of the run, or `run` for a run that could not be judged (the decision's own gate `policy` is lifted by a policy approval)",
      ),
    reason: z.string().min(1).max(2000),
    expires_at: z.iso.datetime({ offset: false }).optional().describe("ISO 8601 UTC; the waiver lapses then"),
  })
  .meta({ id: "CreateWaiverBody" });
export type CreateWaiverBody = z.infer<typeof CreateWaiverBody>;

/**
 * A person's approval of what a pull request's head removes or relaxes in the base branch's
 * policy: it lifts the decision's own gate `policy`. Made through the API (releases:waive) or by
 * a writer other than the pull request's author pressing "Approve policy" on the check run.
 */
export const PolicyApproval = z
  .object({
    approval_id: z.string(),
    decision_id: z.string(),
    reason: z.string(),
    created_by: Actor,
    created_at: Timestamp,
  })
  .meta({ id: "PolicyApproval" });
export type PolicyApproval = z.infer<typeof PolicyApproval>;

export const CreatePolicyApprovalBody = z
  .strictObject({ reason: z.string().min(1).max(2000) })
  .meta({ id: "CreatePolicyApprovalBody" });

export const PolicyApprovalList = listOf(PolicyApproval).meta({ id: "PolicyApprovalList" });

export const RevokeWaiverBody = z
  .strictObject({ reason: z.string().min(1).max(2000) })
  .meta({ id: "RevokeWaiverBody" });

export const WaiverList = listOf(Waiver).meta({ id: "WaiverList" });

/** The pseudo-gate of a run that could not be judged (FAILED): a waiver may name it. */
export const RUN_GATE = RUN_GATE_ID;

/**
 * The pseudo-gate of a run executed outside the service where the base branch's policy does not
 * let it count (`executed_outside_service: never`): no waiver lifts it, only the base's policy.
 */
export const EXECUTOR_GATE = EXECUTOR_GATE_ID;

export const decisionPath = (decisionId: string) => `/v1/release-decisions/${decisionId}`;

/** What a `release_decision.updated` event carries: the decision as it now stands. */
export const DecisionUpdatedData = z.object({
  status: DecisionStatus,
  previous_status: DecisionStatus.nullable().describe("null when the decision was just made"),
  attempt: z.number().int(),
  blocking: z.number().int().describe("How many reasons block it"),
});
export type DecisionUpdatedData = z.infer<typeof DecisionUpdatedData>;

/** Each type of a decision's events and its `data`: one line per type, as `RUN_EVENT_DATA` is for a run's. */
export const DECISION_EVENT_DATA = {
  "release_decision.updated": DecisionUpdatedData,
} as const;
export type DecisionEventType = keyof typeof DECISION_EVENT_DATA;
export type DecisionEventData<T extends DecisionEventType> = z.infer<(typeof DECISION_EVENT_DATA)[T]>;
export const DECISION_EVENT_TYPES = Object.keys(DECISION_EVENT_DATA) as [DecisionEventType, ...DecisionEventType[]];

/** A change of a decision, in the v1 envelope (spec §2.3) plus `decision_id`; `sequence` counts per decision. */
export const DecisionEventEnvelope = z.object({
  schema_version: z.literal("1"),
  event_id: z.string(),
  decision_id: z.string(),
  run_id: z.string().nullable().describe("The run whose end caused the change, if one did"),
  sequence: z.number().int(),
  type: z.string().describe("release_decision.updated; ignore types you do not know"),
  occurred_at: Timestamp,
  data: DecisionUpdatedData,
});
export type DecisionEvent = z.infer<typeof DecisionEventEnvelope>;

/** The envelope as the document gives it, with one schema per type told apart by `type`. */
export const DecisionEvent = typedEnvelope(
  "DecisionEvent",
  DecisionEventEnvelope,
  DECISION_EVENT_DATA,
  `A decision's event: ${DECISION_EVENT_TYPES.join(", ")}; more may be added.`,
);

export const DecisionEventList = listOf(DecisionEvent).meta({ id: "DecisionEventList" });
