import { createHash } from "node:crypto";
import type { Db } from "./db.js";
import type { JobsStore, NewJob } from "./jobs.js";

/** A GitHub webhook delivery, as it was received. */
export interface DeliveryRow {
  delivery_id: string;
  event: string;
  action: string | null;
  /** The webhook's payload (GitHub signed it; its shape is the event's). */
  payload: unknown;
  received_at: string;
}

/** The row as stored: the payload is JSON, with its SHA-256 (hex): the same body under another delivery id is the same delivery. */
interface DbDelivery extends Omit<DeliveryRow, "payload"> {
  payload: string;
  body_sha256: string;
}

/**
 * What kept a commit from being gated (a bad config, say), published as a check run instead of a
 * decision.
 */
export interface GateProblem {
  title: string;
  summary: string;
  annotations: { path: string; line: number; message: string }[];
  /** failure unless said otherwise. */
  conclusion?: "failure" | "action_required";
  /** The button the check run offers: re-run unless said otherwise. */
  action?: "rerun" | "approve" | "none";
}

/** A commit the GitHub App gates under a check name: what it publishes a check run for. */
export interface GitHubCommit {
  repository_id: number;
  head_sha: string;
  check_name: string;
  /** owner/name */
  repository: string;
  installation_id: number;
  ref: string | null;
  pull_request: number | null;
  /** The pull request's base commit, whose `.assure/` is the policy; null for a push. */
  base_sha: string | null;
  /** The head of a pull request from a fork. */
  fork: boolean;
  project_id: string | null;
  decision_id: string | null;
  problem: GateProblem | null;
  updated_at: string;
  /** Counts the times the commit was gated: a change the check run must show. */
  revision: number;
  /** When the check run was last published, and the commit's revision and decision's event sequence it showed. */
  synced_at: string | null;
  synced_revision: number | null;
  synced_sequence: number | null;
}

/** How a gated commit is kept: `fork` as 0/1, `problem` as JSON. */
type GitHubCommitRow = Omit<GitHubCommit, "fork" | "problem"> & { fork: 0 | 1; problem: string | null };

const toGitHubCommit = (row: GitHubCommitRow): GitHubCommit => ({
  ...row,
  fork: row.fork === 1,
  problem: row.problem === null ? null : (JSON.parse(row.problem) as GateProblem),
});

/** What the App says of a commit it gates; the rest of a gated commit is the store's to count. */
export type GatedCommit = Omit<GitHubCommit, "revision" | "synced_at" | "synced_revision" | "synced_sequence">;

/** What a published check run showed: the commit's revision and its decision's latest event sequence. */
export interface CommitVersion {
  revision: number;
  sequence: number;
}

export interface CheckRunRow {
  check_run_id: number;
  repository_id: number;
  head_sha: string;
  check_name: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  /** A fingerprint of the status, conclusion and output last sent. */
  published: string;
  annotations_sent: number;
  created_at: string;
  updated_at: string;
}

/** A successful deployment of a commit to a GitHub environment, at a URL, as a deployment_status said. */
export interface DeploymentRow {
  repository_id: number;
  head_sha: string;
  environment: string;
  deployment_id: number;
  url: string;
  received_at: string;
}

/**
 * A press of an approving button: a fork's "Approve and run" (`approve`, granted to users with
 * write access), or a pull request's "Approve policy" (`approve-policy`, also refused to its author).
 */
export interface ApprovalPress {
  repository_id: number;
  head_sha: string;
  login: string;
  permission: string;
  granted: boolean;
  pressed_at: string;
  delivery_id: string;
  action: "approve" | "approve-policy";
  /** Why it was refused, for people. */
  refusal: string | null;
}

/** How a press is kept: `granted` as 0/1. */
type ApprovalPressRow = Omit<ApprovalPress, "granted"> & { granted: 0 | 1 };

export type CommitKey = Pick<GitHubCommit, "repository_id" | "head_sha" | "check_name">;

/** The GitHub App's records: deliveries, gated commits and the check runs published for them. */
export function makeGitHubStore(db: Db, jobs: Pick<JobsStore["writes"], "enqueueJob">) {
  // Neither the id nor the body may be seen before (the id is not signed: a replayed body under a new id is the same delivery).
  const insertDelivery =
    db.prepare(`INSERT INTO github_deliveries (delivery_id, event, action, payload, body_sha256, received_at)
    VALUES (@delivery_id, @event, @action, @payload, @body_sha256, @received_at) ON CONFLICT DO NOTHING`);
  const deliveryById = db.prepare("SELECT * FROM github_deliveries WHERE delivery_id = ?");
  const upsertCommit =
    db.prepare(`INSERT INTO github_commits (repository_id, head_sha, check_name, repository, installation_id, ref,
      pull_request, base_sha, fork, project_id, decision_id, problem, updated_at, synced_at)
    VALUES (@repository_id, @head_sha, @check_name, @repository, @installation_id, @ref, @pull_request, @base_sha, @fork, @project_id,
      @decision_id, @problem, @updated_at, NULL)
    ON CONFLICT (repository_id, head_sha, check_name) DO UPDATE SET repository = excluded.repository,
      installation_id = excluded.installation_id, ref = COALESCE(excluded.ref, github_commits.ref),
      pull_request = COALESCE(excluded.pull_request, github_commits.pull_request), base_sha = COALESCE(excluded.base_sha, github_commits.base_sha),
      fork = CASE WHEN excluded.fork > github_commits.fork THEN excluded.fork ELSE github_commits.fork END,
      project_id = excluded.project_id, decision_id = excluded.decision_id, problem = excluded.problem, updated_at = excluded.updated_at,
      revision = github_commits.revision + 1`);
  const commitByKey = db.prepare(
    "SELECT * FROM github_commits WHERE repository_id = ? AND head_sha = ? AND check_name = ?",
  );
  const commitsOfSha = db.prepare("SELECT * FROM github_commits WHERE repository_id = ? AND head_sha = ?");
  const markSynced =
    db.prepare(`UPDATE github_commits SET synced_at = @now, synced_revision = @revision, synced_sequence = @sequence
    WHERE repository_id = @repository_id AND head_sha = @head_sha AND check_name = @check_name`);
  const DECISION_SEQUENCE =
    "COALESCE((SELECT MAX(sequence) FROM release_decision_events e WHERE e.decision_id = c.decision_id), 0)";
  const sequenceOf = db
    .prepare(
      `SELECT ${DECISION_SEQUENCE} AS sequence FROM github_commits c WHERE repository_id = ? AND head_sha = ? AND check_name = ?`,
    )
    .pluck();
  // A commit is stale when it was gated again, or its decision changed, since its check run was last published.
  const stale = db.prepare(`SELECT c.* FROM github_commits c
    WHERE c.synced_revision IS NULL OR c.synced_revision < c.revision OR c.synced_sequence < ${DECISION_SEQUENCE}
    ORDER BY c.updated_at LIMIT ?`);
  const insertCheckRun =
    db.prepare(`INSERT INTO github_check_runs (check_run_id, repository_id, head_sha, check_name, status, conclusion,
      published, annotations_sent, created_at, updated_at)
    VALUES (@check_run_id, @repository_id, @head_sha, @check_name, @status, @conclusion, @published, @annotations_sent, @created_at, @updated_at)
    ON CONFLICT (check_run_id) DO UPDATE SET status = excluded.status, conclusion = excluded.conclusion, published = excluded.published,
      annotations_sent = excluded.annotations_sent, updated_at = excluded.updated_at`);
  const insertDeployment =
    db.prepare(`INSERT INTO github_deployments (repository_id, head_sha, environment, deployment_id, url, received_at)
    VALUES (@repository_id, @head_sha, @environment, @deployment_id, @url, @received_at)
    ON CONFLICT (repository_id, head_sha, environment, deployment_id) DO UPDATE SET url = excluded.url, received_at = excluded.received_at`);
  const latestDeployment =
    db.prepare(`SELECT * FROM github_deployments WHERE repository_id = ? AND head_sha = ? AND environment = ?
    ORDER BY received_at DESC, deployment_id DESC LIMIT 1`);
  const insertPress =
    db.prepare(`INSERT INTO github_approval_presses (repository_id, head_sha, login, permission, granted, pressed_at, delivery_id, action, refusal)
    VALUES (@repository_id, @head_sha, @login, @permission, @granted, @pressed_at, @delivery_id, @action, @refusal) ON CONFLICT (delivery_id) DO NOTHING`);
  const pressesOf = db.prepare(
    "SELECT * FROM github_approval_presses WHERE repository_id = ? AND head_sha = ? AND action = ? ORDER BY pressed_at, delivery_id",
  );
  const latestCheckRun =
    db.prepare(`SELECT * FROM github_check_runs WHERE repository_id = ? AND head_sha = ? AND check_name = ?
    ORDER BY check_run_id DESC LIMIT 1`);

  return {
    reads: {
      getDelivery(deliveryId: string): DeliveryRow | undefined {
        const row = deliveryById.get(deliveryId) as DbDelivery | undefined;
        if (!row) return undefined;
        const { body_sha256: _hash, payload, ...delivery } = row;
        return { ...delivery, payload: JSON.parse(payload) as unknown };
      },
      getGitHubCommit({ repository_id, head_sha, check_name }: CommitKey): GitHubCommit | undefined {
        const row = commitByKey.get(repository_id, head_sha, check_name) as GitHubCommitRow | undefined;
        return row && toGitHubCommit(row);
      },
      listGitHubCommitsOfSha(repositoryId: number, headSha: string): GitHubCommit[] {
        return (commitsOfSha.all(repositoryId, headSha) as GitHubCommitRow[]).map(toGitHubCommit);
      },
      /** The version a check run of the commit shows if published now. */
      getCommitVersion(commit: GitHubCommit): CommitVersion {
        return {
          revision: commit.revision,
          sequence: sequenceOf.get(commit.repository_id, commit.head_sha, commit.check_name) as number,
        };
      },
      /** Gated commits whose check run is missing or behind what they would publish now. */
      listStaleGitHubCommits(limit: number): GitHubCommit[] {
        return (stale.all(limit) as GitHubCommitRow[]).map(toGitHubCommit);
      },
      /** The presses of a fork commit's "Approve and run" button, in order. */
      listApprovalPresses(
        repositoryId: number,
        headSha: string,
        action: ApprovalPress["action"] = "approve",
      ): ApprovalPress[] {
        return (pressesOf.all(repositoryId, headSha, action) as ApprovalPressRow[]).map((row) => ({
          ...row,
          granted: row.granted === 1,
        }));
      },
      /** The latest successful deployment of a commit to a GitHub environment. */
      getLatestDeployment(repositoryId: number, headSha: string, environment: string): DeploymentRow | undefined {
        return latestDeployment.get(repositoryId, headSha, environment) as DeploymentRow | undefined;
      },
      /** The newest check run the App made for the commit under that name: the one GitHub shows. */
      getLatestCheckRun({ repository_id, head_sha, check_name }: CommitKey): CheckRunRow | undefined {
        return latestCheckRun.get(repository_id, head_sha, check_name) as CheckRunRow | undefined;
      },
    },
    writes: {
      /** Keeps a delivery and queues its processing, once per delivery id and body: false for a delivery seen before. */
      receiveDelivery(delivery: DeliveryRow, job: NewJob): boolean {
        const payload = JSON.stringify(delivery.payload);
        const row: DbDelivery = {
          ...delivery,
          payload,
          body_sha256: createHash("sha256").update(payload).digest("hex"),
        };
        if (insertDelivery.run(row).changes === 0) return false;
        jobs.enqueueJob(job);
        return true;
      },
      /** Records what the App gates for a commit (or the problem that kept it from it), and queues publishing it. */
      saveGitHubCommit(commit: GatedCommit, publish: NewJob): void {
        upsertCommit.run({
          ...commit,
          fork: commit.fork ? 1 : 0,
          problem: commit.problem === null ? null : JSON.stringify(commit.problem),
        });
        jobs.enqueueJob(publish);
      },
      /** Keeps a press of the approve button, once per delivery. */
      recordApprovalPress(press: ApprovalPress): void {
        insertPress.run({ ...press, granted: press.granted ? 1 : 0 });
      },
      saveDeployment(row: DeploymentRow): void {
        insertDeployment.run(row);
      },
      markGitHubCommitSynced(key: CommitKey, version: CommitVersion, now: string): void {
        markSynced.run({ ...key, ...version, now });
      },
      saveCheckRun(row: CheckRunRow): void {
        insertCheckRun.run(row);
      },
    },
  };
}
