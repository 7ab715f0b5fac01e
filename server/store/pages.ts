import type { Sql } from "./sql/sql.js";
import { COUNTED, toConversationView, type ConversationView, type DbConversationView } from "./conversations.js";
import type { Evaluation } from "../contract/index.js";
import { toEvaluation } from "./evaluations.js";
import type { EventRow } from "./events.js";

/** A run's checks of one case, tallied: what the run page summarises before the conversations. */
export interface CaseTally {
  kind: string;
  metric_id: string;
  scenario_id: string | null;
  spec_path: string | null;
  passed: number;
  failed: number;
  inconclusive: number;
  errored: number;
}

/** How many rows of the group `condition` holds for. */
const countOf = (condition: string) => `SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;

/**
 * What the evidence pages read beyond the API's reads: a run's conversations a page at a time
 * with their events and evaluations, where an element cited as evidence is, and tallies.
 */
export function makePagesStore(db: Sql) {
  const d = db.dialect;
  const conversationsAt = db.prepare(
    `SELECT c.*, ${COUNTED} FROM conversations c WHERE c.run_id = ? ORDER BY c.conversation_id LIMIT ? OFFSET ?`,
  );
  const conversationCount = db.prepare("SELECT COUNT(*) FROM conversations WHERE run_id = ?").pluck();
  const positionOf = db.prepare("SELECT COUNT(*) FROM conversations WHERE run_id = ? AND conversation_id < ?").pluck();
  const conversationOfEvaluation = db
    .prepare("SELECT conversation_id FROM evaluations WHERE run_id = ? AND evaluation_id = ?")
    .pluck();
  const conversationOfEvent = db
    .prepare("SELECT conversation_id FROM run_events WHERE run_id = ? AND sequence = ?")
    .pluck();
  const conversationExists = db
    .prepare("SELECT conversation_id FROM conversations WHERE run_id = ? AND conversation_id = ?")
    .pluck();
  const eventsOf = db.prepare(
    `SELECT * FROM run_events WHERE conversation_id IN (${d.jsonArrayValues("?")}) ORDER BY conversation_id, sequence`,
  );
  const evaluationsOf = db.prepare(
    `SELECT * FROM evaluations WHERE conversation_id IN (${d.jsonArrayValues("?")}) ORDER BY conversation_id, turn NULLS FIRST, evaluation_id`,
  );
  const runWide = db.prepare(
    "SELECT * FROM evaluations WHERE run_id = ? AND conversation_id IS NULL ORDER BY evaluation_id",
  );
  // A run's own entries but one per evaluation (as many as its checks): those the evaluations themselves show.
  const runEvents = db.prepare(
    "SELECT * FROM run_events WHERE run_id = ? AND conversation_id IS NULL AND type != 'evaluation.completed' ORDER BY sequence",
  );
  const tallies =
    db.prepare(`SELECT kind, metric_id, scenario_id, CASE WHEN kind = 'expectation' THEN spec_path END AS spec_path,
      ${countOf("status = 'passed'")} AS passed, ${countOf("status = 'failed'")} AS failed,
      ${countOf("status = 'inconclusive'")} AS inconclusive, ${countOf("status = 'errored'")} AS errored
    FROM evaluations WHERE run_id = ? AND conversation_id IS NOT NULL
    GROUP BY kind, metric_id, scenario_id, 4 ORDER BY ${countOf("status != 'passed'")} DESC, scenario_id NULLS FIRST, metric_id LIMIT ?`);
  const caseCount = db.prepare(`SELECT COUNT(*) AS cases, COALESCE(${countOf("failing > 0")}, 0) AS failing FROM (
      SELECT ${countOf("status != 'passed'")} AS failing FROM evaluations WHERE run_id = ? AND conversation_id IS NOT NULL
      GROUP BY kind, metric_id, scenario_id, CASE WHEN kind = 'expectation' THEN spec_path END) AS cases`);

  const latestOnBranch = db
    .prepare(
      `SELECT d.status FROM release_decisions d
      JOIN project_repositories pr ON pr.project_id = d.project_id AND pr.full_name = d.repository AND pr.github_id = @repository_id
    WHERE d.project_id = @project_id AND EXISTS (SELECT 1 FROM runs r WHERE r.project_id = d.project_id AND r.source_repository = d.repository
        AND r.source_commit_sha = d.commit_sha AND ${d.jsonText("r.source", "$.ref")} = @ref)
    ORDER BY d.created_at DESC, d.decision_id DESC LIMIT 1`,
    )
    .pluck();

  return {
    reads: {
      /** The status of the latest decision on a commit of a repository's branch (its runs' ref); undefined when none. */
      async latestDecisionOnBranch(
        projectId: string,
        repositoryId: number,
        branch: string,
      ): Promise<"ALLOWED" | "BLOCKED" | "PENDING" | undefined> {
        return latestOnBranch.get<"ALLOWED" | "BLOCKED" | "PENDING">({
          project_id: projectId,
          repository_id: repositoryId,
          ref: `refs/heads/${branch}`,
        });
      },
      /** One page of a run's conversations, in the order they were made. */
      async pageConversations(runId: string, offset: number, limit: number): Promise<ConversationView[]> {
        return (await conversationsAt.all<DbConversationView>(runId, limit, offset)).map(toConversationView);
      },
      async countConversations(runId: string): Promise<number> {
        return (await conversationCount.get<number>(runId))!;
      },
      /** Where a conversation is in its run's order (0 first); undefined if the run has no such conversation. */
      async conversationPosition(runId: string, conversationId: string): Promise<number | undefined> {
        return (await conversationExists.get(runId, conversationId)) === undefined
          ? undefined
          : (await positionOf.get<number>(runId, conversationId))!;
      },
      /** The conversation an evaluation or a trace entry belongs to; null for the run's own, undefined if there is none. */
      async conversationOf(
        runId: string,
        of: { evaluation: string } | { sequence: number },
      ): Promise<string | null | undefined> {
        return "evaluation" in of
          ? conversationOfEvaluation.get<string | null>(runId, of.evaluation)
          : conversationOfEvent.get<string | null>(runId, of.sequence);
      },
      async eventsOfConversations(conversationIds: readonly string[]): Promise<EventRow[]> {
        return eventsOf.all<EventRow>(JSON.stringify(conversationIds));
      },
      async evaluationsOfConversations(conversationIds: readonly string[]): Promise<Evaluation[]> {
        return (await evaluationsOf.all<Parameters<typeof toEvaluation>[0]>(JSON.stringify(conversationIds))).map(
          toEvaluation,
        );
      },
      /** The run's evaluations of no one conversation (detectors, the budget). */
      async listRunWideEvaluations(runId: string): Promise<Evaluation[]> {
        return (await runWide.all<Parameters<typeof toEvaluation>[0]>(runId)).map(toEvaluation);
      },
      /** The run's own trace entries (status changes, resumptions, findings raised), outside any conversation; not the evaluations'. */
      async listRunLevelEvents(runId: string): Promise<EventRow[]> {
        return runEvents.all<EventRow>(runId);
      },
      /** The checks of each case (scenario × expectation, metric or probe), tallied by status, the failing first; at most `limit`. */
      async tallyCases(runId: string, limit: number): Promise<CaseTally[]> {
        return tallies.all<CaseTally>(runId, limit);
      },
      /** How many cases the run's checks cover, and how many of them did not all pass. */
      async countCases(runId: string): Promise<{ cases: number; failing: number }> {
        return (await caseCount.get<{ cases: number; failing: number }>(runId))!;
      },
    },
    writes: {},
  };
}
