import { z } from "zod";
import {
  CommitSha,
  ProjectScopedPageQuery,
  RepositoryName,
  ResourceId,
  Timestamp,
  caseInsensitive,
  extensible,
  listOf,
} from "./common.js";
import { HTTP_URL_WITH_QUERY_PATTERN } from "./url-syntax.js";

export const RUN_STATUSES = ["QUEUED", "RUNNING", "EVALUATING", "COMPLETED", "INCONCLUSIVE", "FAILED"] as const;
/** The statuses a run ends in: it never changes again. */
export const TERMINAL_RUN_STATUSES = [
  "COMPLETED",
  "INCONCLUSIVE",
  "FAILED",
] as const satisfies readonly (typeof RUN_STATUSES)[number][];
export const isTerminalRunStatus = (status: string): boolean =>
  (TERMINAL_RUN_STATUSES as readonly string[]).includes(status);
export const RunStatus = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatus>;

export const Verdict = z
  .enum(["PENDING", "PASS", "FAIL", "INCONCLUSIVE", "ERROR"])
  .describe("PENDING until the run is terminal; ERROR when nothing could be judged");
export type Verdict = z.infer<typeof Verdict>;

export const FailureCause = z.enum([
  "agent_contract_violation",
  "target_unreachable",
  "evaluator_unavailable",
  "timeout",
  "internal_error",
  "budget_exceeded",
]);
export type FailureCause = z.infer<typeof FailureCause>;

export const RunFailure = z.object({ cause: extensible(FailureCause), message: z.string() }).meta({ id: "RunFailure" });
export type RunFailure = z.infer<typeof RunFailure>;

const RunSourceFields = {
  repository: RepositoryName,
  commit_sha: CommitSha,
  ref: z.string().min(1).max(255).optional(),
  pull_request: z.number().int().positive().optional(),
};

/** Where the change under test comes from. */
export const RunSource = z.object(RunSourceFields).meta({ id: "RunSource" });
export type RunSource = z.infer<typeof RunSource>;

/** Where a run was executed: by the service's engine, or outside it (`assure test --upload`) and uploaded. */
export const RunExecutor = z
  .enum(["service", "local"])
  .describe("service: executed by the service's engine; local: held outside the service and uploaded, judged here");
export type RunExecutor = z.infer<typeof RunExecutor>;

/** Who a run the GitHub App started says started it (`started_by`): only such runs fill the slots the App plans. */
export const GITHUB_APP_KEY_ID = "github-app";

export const Run = z
  .object({
    run_id: z.string().describe("Correlation key of every artifact of the run"),
    project_id: z.string(),
    status: RunStatus,
    verdict: Verdict,
    failure: RunFailure.nullable().describe("Set when status is FAILED: which cause"),
    test_spec_id: z.string(),
    spec_version: z.string(),
    environment_id: z.string(),
    agent_id: z.string(),
    agent_version: z
      .string()
      .describe(
        "The agent's version; for a run on a per-commit URL (a template, a deployment, a URL the request named), the commit tested",
      ),
    agent_url: z
      .string()
      .nullable()
      .describe(
        "The agent's base URL this run called: the environment's, its template filled from source, or a deployment's",
      ),
    source: RunSource.nullable(),
    started_by: z
      .string()
      .nullable()
      .describe(
        "Who started it: the API key's id, or `github-app` for the GitHub App; null for runs made before it was recorded",
      ),
    executor: RunExecutor,
    uploaded_by: z
      .string()
      .nullable()
      .describe("For a run executed outside the service: the API key that uploaded it; null otherwise"),
    created_at: Timestamp,
    updated_at: Timestamp,
    started_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
    links: z.object({
      self: z.string(),
      evidence: z.string(),
      conversations: z.string(),
      trace: z.string(),
      evaluations: z.string(),
      findings: z.string(),
      html: z
        .string()
        .optional()
        .describe(
          "The run's page for people: a signed link (exp, sig) that opens it without an API key, read-only, minted as the run is read",
        ),
    }),
  })
  .meta({ id: "Run" });
export type Run = z.infer<typeof Run>;

export const CreateRunBody = z
  .strictObject({
    test_spec_id: ResourceId,
    environment_id: ResourceId,
    spec_version: z.string().min(1).max(200).optional().describe("Pin a version of the spec; default the latest"),
    source: z.strictObject(RunSourceFields).optional().describe("Where the change under test comes from"),
    agent_url: z
      .url({ protocol: /^https?$/, error: "must be an http or https URL" })
      .max(2048)
      .meta({ pattern: HTTP_URL_WITH_QUERY_PATTERN })
      .optional()
      .describe(
        "Where this commit's agent was deployed; it must match the environment's url_pattern (without one, equal its base_url)",
      ),
  })
  .meta({ id: "CreateRunBody" });
export type CreateRunBody = z.infer<typeof CreateRunBody>;

export const ListRunsQuery = ProjectScopedPageQuery.extend({
  status: caseInsensitive(RunStatus).optional().describe("Case-insensitive: failed = FAILED"),
  environment: z.string().min(1).max(128).optional().describe("Environment id or name"),
});
export type ListRunsQuery = z.infer<typeof ListRunsQuery>;

export const RunList = listOf(Run).meta({ id: "RunList" });

/** At most this many conversations in one upload, and trace entries. */
export const MAX_UPLOADED_CONVERSATIONS = 10_000;
export const MAX_UPLOADED_EVENTS = 200_000;

export const UploadedConversation = z
  .strictObject({
    conversation_id: ResourceId.describe("The id it had where it was held: the trace's entries name it"),
    kind: z.enum(["scenario", "probe"]),
    scenario_id: z.string().min(1).max(300),
    repeat_index: z.number().int().min(1),
    retry: z.number().int().min(0).default(0),
    canary: z.string().min(1).max(200).nullable().default(null).describe("The canary planted in its system prompt"),
  })
  .meta({ id: "UploadedConversation" });

export const UploadedTraceEntry = z
  .strictObject({
    sequence: z.number().int().min(1).describe("Gap-free from 1"),
    type: z.string().min(1).max(100),
    occurred_at: Timestamp,
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "UploadedTraceEntry" });

/**
 * A run held outside the service (`assure test --upload`): what the agent was asked and said, never
 * what anyone concluded from it. The service checks it against the spec version it names and judges it.
 */
export const UploadRunBody = z
  .strictObject({
    test_spec_id: ResourceId,
    spec_version: z.string().min(1).max(200).describe("The spec version the conversations were held for"),
    environment_id: ResourceId,
    source: z.strictObject(RunSourceFields).optional().describe("The commit the agent under test was built from"),
    conversations: z
      .array(UploadedConversation)
      .min(1)
      .max(MAX_UPLOADED_CONVERSATIONS)
      .describe("The completed conversations: each planned case once, or more when it was tried again"),
    trace: z
      .array(UploadedTraceEntry)
      .max(MAX_UPLOADED_EVENTS)
      .describe("The conversations' events in order; no run, evaluation or finding events"),
  })
  .meta({ id: "UploadRunBody" });
export type UploadRunBody = z.infer<typeof UploadRunBody>;
