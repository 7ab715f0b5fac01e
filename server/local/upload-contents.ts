import type { UploadRunBody } from "../contract/index.js";
import type { ServiceStore } from "../store/service-store.js";
import { toLoggedEvent } from "../store/index.js";

const PAGE = 200;

/**
 * What an upload of a run held outside the service is made of (`assure test --upload`, the
 * Action's in-job runs): its completed conversations and their events, never its status,
 * evaluations or findings — the service judges the conversations itself.
 */
export async function uploadContents(
  store: ServiceStore,
  runId: string,
): Promise<Pick<UploadRunBody, "conversations" | "trace">> {
  const conversations = (await store.listRunConversations(runId)).filter((c) => c.status === "completed");
  const held = new Set(conversations.map((c) => c.conversation_id));
  const trace: UploadRunBody["trace"] = [];
  for (let after = 0; ;) {
    const page = await store.listEvents(runId, after, PAGE);
    for (const row of page) {
      if (row.conversation_id === null || !held.has(row.conversation_id)) continue;
      const event = toLoggedEvent(row);
      trace.push({ sequence: trace.length + 1, type: event.type, occurred_at: event.occurred_at, data: event.data });
    }
    if (page.length < PAGE) break;
    after = page.at(-1)!.sequence;
  }
  return {
    conversations: conversations.map((c) => ({
      conversation_id: c.conversation_id,
      kind: c.kind,
      scenario_id: c.scenario_id,
      repeat_index: c.repeat_index,
      retry: c.retry,
      canary: c.canary,
    })),
    trace,
  };
}
