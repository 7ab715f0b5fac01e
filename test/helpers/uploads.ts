import type { ApiClient } from "./api-client.js";
import { readTrace } from "./runs.js";

export interface UploadBody {
  test_spec_id: string;
  spec_version: string;
  environment_id: string;
  source?: { repository: string; commit_sha: string };
  conversations: {
    conversation_id: string;
    kind: string;
    scenario_id: string;
    repeat_index: number;
    retry: number;
    canary: string | null;
  }[];
  trace: { sequence: number; type: string; occurred_at: string; data: Record<string, any> }[];
}

/**
 * What `assure test --upload` sends, made from a run the service held: its completed conversations
 * and their events (never the run's status, evaluations or findings), numbered from 1.
 */
export async function uploadOf(client: ApiClient, runId: string): Promise<UploadBody> {
  const run = (await client.get(`/v1/runs/${runId}`)).body;
  const conversations = (await client.get(`/v1/runs/${runId}/conversations?limit=200`)).body.data as {
    conversation_id: string;
    kind: string;
    scenario_id: string;
    repeat_index: number;
    retry: number;
    status: string;
  }[];
  const completed = new Set(conversations.filter((c) => c.status === "completed").map((c) => c.conversation_id));
  const events = (await readTrace(client, runId)).filter((e) => completed.has(e.data.conversation_id));
  const canaryOf = (id: string) => {
    const system = events.find(
      (e) => e.data.conversation_id === id && e.type === "message.sent" && e.data.role === "system",
    );
    return /Internal reference \(confidential\): (\S+)$/.exec(system?.data.content ?? "")?.[1] ?? null;
  };
  return {
    test_spec_id: run.test_spec_id,
    spec_version: run.spec_version,
    environment_id: run.environment_id,
    conversations: conversations
      .filter((c) => completed.has(c.conversation_id))
      .map((c) => ({
        conversation_id: c.conversation_id,
        kind: c.kind,
        scenario_id: c.scenario_id,
        repeat_index: c.repeat_index,
        retry: c.retry,
        canary: canaryOf(c.conversation_id),
      })),
    trace: events.map((e, i) => ({
      sequence: i + 1,
      type: e.type,
      occurred_at: (e as unknown as { occurred_at: string }).occurred_at,
      data: e.data,
    })),
  };
}
