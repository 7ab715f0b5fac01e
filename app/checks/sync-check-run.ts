import { CHECK_RUN_BUTTONS } from "./buttons.js";
import { z } from "zod";
import { defineTask } from "../../server/engine/define-task.js";
import { createHash } from "node:crypto";
import type { ProbotOctokit } from "probot";
import type { Task } from "../../server/engine/worker.js";
import { POLICY_GATE } from "../../server/contract/index.js";
import { withoutLinkSignatures, type PageLinks } from "../../server/pages/page-links.js";
import type { Logger } from "../../server/log.js";
import type { CommitKey } from "../../server/store/github.js";
import type { NewJob } from "../../server/store/jobs.js";
import type { ServiceStore } from "../../server/store/service-store.js";
import { repositoryRef } from "../repository/files.js";
import { ANNOTATIONS_PER_REQUEST, toAnnotations } from "./annotations.js";
import { toCheckState } from "./conclusion.js";
import { renderWithEvidenceLinks } from "./evidence-links.js";
import { readGateView } from "./gate-view.js";
import { renderSummary, renderTitle } from "./render-output.js";

export const SYNC_CHECK_RUN = "sync_check_run";

/** The job that publishes a gated commit's check run; one queued per commit at a time. */
export function syncCheckRunJob(key: CommitKey, now: string): NewJob {
  return {
    task: SYNC_CHECK_RUN,
    job_key: `${SYNC_CHECK_RUN}:${key.repository_id}:${key.head_sha}:${key.check_name}`,
    payload: key,
    run_at: now,
    max_attempts: 10,
  };
}

export interface SyncCheckRunDeps {
  store: ServiceStore;
  log: Logger;
  /** The service's public base URL: evidence links in check runs are absolute. */
  baseUrl: string;
  /** Signs the links to the evidence pages that check runs point people at. */
  pages: PageLinks;
  octokitFor(installationId: number): Promise<ProbotOctokit>;
  clock: { now(): Date };
}

/** The buttons a check run offers besides "Approve policy", by what its view asks for. */
const ACTIONS = {
  rerun: [CHECK_RUN_BUTTONS.rerun],
  approve: [CHECK_RUN_BUTTONS.approve],
  none: [],
} as const;

/**
 * Publishes what the App knows of a gated commit as its check run: updated in place while it is
 * open; once completed (GitHub cannot reopen one), a change makes a new check run of the same name,
 * which GitHub shows as current. Annotations go in batches of 50 before the completing update.
 * What was published is recorded after each request, so a retry after a failure resumes, never
 * sends an annotation twice, and a check run that already shows the current state is left alone.
 */
/** The key of the gated commit a sync job publishes. */
const CommitKeyPayload = z.object({ repository_id: z.number().int(), head_sha: z.string(), check_name: z.string() });

export function makeSyncCheckRun({ store, log, baseUrl, pages, octokitFor, clock }: SyncCheckRunDeps): Task {
  return defineTask(CommitKeyPayload, async function syncCheckRun(key) {
    const commit = await store.getGitHubCommit(key);
    if (!commit) return;
    // Read before the view: a change made while publishing leaves the commit behind, for the next sync.
    const version = await store.getCommitVersion(commit);
    const view = await readGateView(store, commit);
    if (!view) return;
    const markSynced = () =>
      store.write([
        "markGitHubCommitSynced",
        { repository_id: commit.repository_id, head_sha: commit.head_sha, check_name: commit.check_name },
        version,
        clock.now().toISOString(),
      ]);

    const state = toCheckState(
      view.kind === "problem"
        ? { kind: "problem", conclusion: view.problem.conclusion ?? "failure" }
        : { kind: "decision", status: view.decision.status, reasons: view.decision.reasons },
    );
    const awaitsPolicyApproval =
      view.kind === "decision" &&
      view.decision.reasons.some((r) => r.run_id === null && r.gate_id === POLICY_GATE && r.blocking);
    const actions = [
      ...(awaitsPolicyApproval ? [CHECK_RUN_BUTTONS["approve-policy"]] : []),
      ...ACTIONS[view.kind === "problem" ? (view.problem.action ?? "rerun") : "rerun"],
    ];
    const { annotations, output, detailsUrl } = await renderWithEvidenceLinks(
      { store, pages, baseUrl },
      view,
      (absolute) => {
        const { annotations, total } = toAnnotations(view, absolute);
        const summary = renderSummary(view, absolute, total - annotations.length);
        const detailsUrl = view.kind === "decision" ? absolute(view.decision.links.self) : undefined;
        return { annotations, output: { title: renderTitle(view), summary }, detailsUrl };
      },
    );
    // What the check run says, its links compared without their signature and expiry: a link minted
    // again is not a change, and re-publishing an unchanged completed check run would make a new one.
    const said = {
      ...state,
      title: output.title,
      summary: withoutLinkSignatures(output.summary),
      annotations: annotations.length,
    };
    const fingerprint = createHash("sha256").update(JSON.stringify(said)).digest("hex");
    if ((await store.getLatestCheckRun(key))?.published === fingerprint) {
      await markSynced();
      return;
    }

    const octokit = await octokitFor(commit.installation_id);
    const repository = repositoryRef(commit.repository);
    const now = () => clock.now().toISOString();
    // external_id names the decision (or, for a commit that could not be gated, the commit); details_url is its evidence.
    const identity =
      view.kind === "decision"
        ? { external_id: view.decision.decision_id, details_url: detailsUrl }
        : { external_id: `${commit.repository}@${commit.head_sha}` };
    const record = async (
      checkRunId: number,
      status: string,
      conclusion: string | null,
      annotationsSent: number,
      what: string,
      createdAt: string,
    ) =>
      void (await store.write([
        "saveCheckRun",
        {
          check_run_id: checkRunId,
          ...key,
          status: status as "queued" | "in_progress" | "completed",
          conclusion,
          published: what,
          annotations_sent: annotationsSent,
          created_at: createdAt,
          updated_at: now(),
        },
      ]));

    async function adoptCheckRun() {
      if (await store.getLatestCheckRun(key)) return undefined;
      const { data } = await octokit.rest.checks.listForRef({
        ...repository,
        ref: commit!.head_sha,
        check_name: commit!.check_name,
        filter: "latest",
      });
      const found = data.check_runs
        .filter((run) => run.external_id === identity.external_id)
        .sort((x, y) => y.id - x.id)[0];
      if (!found) return undefined;
      const same =
        found.status === state.status && found.conclusion === state.conclusion && found.output.title === output.title;
      const createdAt = found.started_at ?? now();
      await record(
        found.id,
        found.status,
        found.conclusion ?? null,
        found.output.annotations_count,
        same ? fingerprint : "",
        createdAt,
      );
      log.warn(
        { check_run_id: found.id },
        `Adopted check run ${found.id} of ${commit!.repository}@${commit!.head_sha.slice(0, 7)}, made before a restart`,
      );
      return store.getLatestCheckRun(key);
    }

    // With no record of a check run, one may still exist: made just before the process died. Adopt it.
    const latest = (await adoptCheckRun()) ?? (await store.getLatestCheckRun(key));
    if (latest?.published === fingerprint) {
      await markSynced();
      return;
    }

    const completing = state.status === "completed";
    const published = async (checkRunId: number, status: string, conclusion: string | null): Promise<void> => {
      await record(checkRunId, status, conclusion, sent, fingerprint, createdAt);
      await markSynced();
      log.info(
        { check_run_id: checkRunId },
        `Published ${commit.check_name} for ${commit.repository}@${commit.head_sha.slice(0, 7)}: ${conclusion ?? status}`,
      );
    };

    // An open check run is updated; after a completed one (or none), a new one is made.
    let checkRunId = latest && latest.status !== "completed" ? latest.check_run_id : undefined;
    let sent = checkRunId !== undefined ? latest!.annotations_sent : 0;
    const createdAt = checkRunId !== undefined ? latest!.created_at : now();
    const batches: (typeof annotations)[] = [];
    for (let i = sent; i < annotations.length; i += ANNOTATIONS_PER_REQUEST) {
      batches.push(annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
    }

    if (checkRunId === undefined) {
      // Completed at once when its annotations fit in one request; else open, and completed after the batches.
      const completedAtOnce = completing && batches.length <= 1;
      const { data } = await octokit.rest.checks.create({
        ...repository,
        name: commit.check_name,
        head_sha: commit.head_sha,
        ...identity,
        started_at: now(),
        ...(completedAtOnce
          ? { status: "completed" as const, conclusion: state.conclusion!, completed_at: now(), actions }
          : { status: completing ? ("in_progress" as const) : state.status }),
        output: { ...output, annotations: batches.shift() ?? [] },
      });
      checkRunId = data.id;
      sent += data.output.annotations_count;
      if (completedAtOnce || !completing) return published(checkRunId, data.status, data.conclusion);
      await record(checkRunId, data.status, null, sent, "", createdAt);
    }
    // The open check run: every batch but the last, then the update that completes it with the last.
    const last = completing ? (batches.pop() ?? []) : [];
    for (const batch of batches) {
      await octokit.rest.checks.update({
        ...repository,
        check_run_id: checkRunId,
        output: { ...output, annotations: batch },
      });
      sent += batch.length;
      await record(checkRunId, "in_progress", null, sent, "", createdAt);
    }
    const { data } = await octokit.rest.checks.update({
      ...repository,
      check_run_id: checkRunId,
      ...identity,
      ...(completing
        ? { status: "completed" as const, conclusion: state.conclusion!, completed_at: now(), actions }
        : { status: state.status }),
      output: { ...output, ...(last.length > 0 ? { annotations: last } : {}) },
    });
    sent += last.length;
    await published(checkRunId, data.status, data.conclusion);
  });
}
