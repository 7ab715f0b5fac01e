import type { Db } from "./db.js";

export interface ConversationRow {
  conversation_id: string;
  run_id: string;
  kind: "scenario" | "probe";
  scenario_id: string;
  repeat_index: number;
  /** 1, or more when an earlier attempt was interrupted by a crash and the conversation ran again. */
  attempt: number;
  status: "running" | "completed" | "interrupted" | "failed";
  /** The canary token planted in this conversation's system prompt, if the probe asks for one. */
  canary: string | null;
  created_at: string;
  ended_at: string | null;
}

export function makeConversationsStore(db: Db) {
  const insert = db.prepare(`INSERT INTO conversations
    (conversation_id, run_id, kind, scenario_id, repeat_index, attempt, status, canary, created_at, ended_at)
    VALUES (@conversation_id, @run_id, @kind, @scenario_id, @repeat_index, @attempt, @status, @canary, @created_at, @ended_at)`);
  const finish = db.prepare(
    "UPDATE conversations SET status = @status, ended_at = @ended_at WHERE conversation_id = @conversation_id AND status = 'running'",
  );
  const interruptRunning = db.prepare(
    "UPDATE conversations SET status = 'interrupted', ended_at = @now WHERE run_id = @run_id AND status = 'running'",
  );
  const byId = db.prepare("SELECT * FROM conversations WHERE conversation_id = ?");
  const ofRun = db.prepare("SELECT * FROM conversations WHERE run_id = ? ORDER BY conversation_id");
  const pageOfRun = db.prepare(
    "SELECT * FROM conversations WHERE run_id = @run_id AND (@after IS NULL OR conversation_id > @after) ORDER BY conversation_id LIMIT @limit",
  );

  return {
    reads: {
      getConversation(conversationId: string): ConversationRow | undefined {
        return byId.get(conversationId) as ConversationRow | undefined;
      },
      /** All of a run's conversations in the order they were held, or a page of them after an id. */
      listRunConversations(runId: string, after?: string, limit?: number): ConversationRow[] {
        if (limit === undefined) return ofRun.all(runId) as ConversationRow[];
        return pageOfRun.all({ run_id: runId, after: after ?? null, limit }) as ConversationRow[];
      },
    },
    writes: {
      createConversation(row: ConversationRow): void {
        insert.run(row);
      },
      finishConversation(conversationId: string, status: "completed" | "failed", endedAt: string): void {
        finish.run({ conversation_id: conversationId, status, ended_at: endedAt });
      },
      /** After a crash: conversations left running are kept as evidence, marked interrupted. */
      interruptRunningConversations(runId: string, now: string): number {
        return interruptRunning.run({ run_id: runId, now }).changes;
      },
    },
  };
}
