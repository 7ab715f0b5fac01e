import type { Sql } from "./sql/sql.js";

export interface ConversationRow {
  conversation_id: string;
  run_id: string;
  kind: "scenario" | "probe";
  scenario_id: string;
  repeat_index: number;
  /** 1, or more when an earlier attempt was interrupted by a crash and the conversation ran again. */
  attempt: number;
  /** 0 for the first try of its scenario and repeat; k for the k-th try again after its checks failed (defaults.retry_failed). */
  retry: number;
  /** What its checks said when judged to decide whether to try again; null when they were not judged for that. */
  retry_outcome: "passed" | "failed" | null;
  status: "running" | "completed" | "interrupted" | "failed";
  /** The canary token planted in this conversation's system prompt, if the probe asks for one. */
  canary: string | null;
  created_at: string;
  ended_at: string | null;
}

/** A conversation as the evidence shows it: whether the evaluations use it (the last completed try of its scenario and repeat). */
export type ConversationView = ConversationRow & { counted: boolean };

/** A conversation as read with its `counted` column (0 or 1). */
export type DbConversationView = ConversationRow & { counted: 0 | 1 };

export const toConversationView = ({ counted, ...row }: DbConversationView): ConversationView => ({
  ...row,
  counted: counted === 1,
});

/** The `counted` column of conversation `c`: 1 when it completed and no later try of its case did, else 0. */
export const COUNTED = `CASE WHEN c.status = 'completed' AND NOT EXISTS (SELECT 1 FROM conversations later
      WHERE later.run_id = c.run_id AND later.kind = c.kind AND later.scenario_id = c.scenario_id AND later.repeat_index = c.repeat_index
        AND later.retry > c.retry AND later.status = 'completed') THEN 1 ELSE 0 END AS counted`;

export function makeConversationsStore(db: Sql) {
  const insert = db.prepare(`INSERT INTO conversations
    (conversation_id, run_id, kind, scenario_id, repeat_index, attempt, retry, status, canary, created_at, ended_at)
    VALUES (@conversation_id, @run_id, @kind, @scenario_id, @repeat_index, @attempt, @retry, @status, @canary, @created_at, @ended_at)`);
  const setOutcome = db.prepare("UPDATE conversations SET retry_outcome = ? WHERE conversation_id = ?");
  const finish = db.prepare(
    "UPDATE conversations SET status = @status, ended_at = @ended_at WHERE conversation_id = @conversation_id AND status = 'running'",
  );
  const interruptRunning = db.prepare(
    "UPDATE conversations SET status = 'interrupted', ended_at = @now WHERE run_id = @run_id AND status = 'running'",
  );
  const byId = db.prepare(`SELECT c.*, ${COUNTED} FROM conversations c WHERE c.conversation_id = ?`);
  const ofRun = db.prepare("SELECT * FROM conversations WHERE run_id = ? ORDER BY conversation_id");
  const pageOfRun = db.prepare(
    `SELECT c.*, ${COUNTED} FROM conversations c WHERE c.run_id = @run_id AND (CAST(@after AS TEXT) IS NULL OR c.conversation_id > @after) ORDER BY c.conversation_id LIMIT @limit`,
  );

  const progress = db.prepare(`SELECT
      (SELECT COUNT(*) FROM (SELECT DISTINCT kind, scenario_id, repeat_index FROM conversations
        WHERE run_id = @run_id AND status IN ('completed', 'failed')) AS ended_cases) AS ended,
      COALESCE(SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END), 0) AS running
    FROM conversations WHERE run_id = @run_id`);

  return {
    reads: {
      /** How far a run is: its planned conversations that ended (each counted once, whatever its tries), and those being held now. */
      async getRunProgress(runId: string): Promise<{ ended: number; running: number }> {
        return (await progress.get<{ ended: number; running: number }>({ run_id: runId }))!;
      },
      async getConversation(conversationId: string): Promise<ConversationView | undefined> {
        const row = await byId.get<DbConversationView>(conversationId);
        return row && toConversationView(row);
      },
      /** All of a run's conversations in the order they were held. */
      async listRunConversations(runId: string): Promise<ConversationRow[]> {
        return ofRun.all<ConversationRow>(runId);
      },
      /** A page of a run's conversations after an id, as the evidence shows them. */
      async pageRunConversations(runId: string, after: string | undefined, limit: number): Promise<ConversationView[]> {
        return (await pageOfRun.all<DbConversationView>({ run_id: runId, after: after ?? null, limit })).map(
          toConversationView,
        );
      },
    },
    writes: {
      async createConversation(row: ConversationRow): Promise<void> {
        await insert.run(row);
      },
      async finishConversation(conversationId: string, status: "completed" | "failed", endedAt: string): Promise<void> {
        await finish.run({ conversation_id: conversationId, status, ended_at: endedAt });
      },
      /** What a conversation's checks said, judged to decide whether to try its case again. */
      async setRetryOutcome(conversationId: string, outcome: "passed" | "failed"): Promise<void> {
        await setOutcome.run(outcome, conversationId);
      },
      /** After a crash: conversations left running are kept as evidence, marked interrupted. */
      async interruptRunningConversations(runId: string, now: string): Promise<number> {
        return (await interruptRunning.run({ run_id: runId, now })).changes;
      },
    },
  };
}
