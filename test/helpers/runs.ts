import { expect } from "@jest/globals";
import type { ApiClient } from "./api-client.js";
import { waitFor } from "./wait.js";

const TERMINAL = new Set(["COMPLETED", "INCONCLUSIVE", "FAILED"]);
let keys = 0;

export async function startRun(client: ApiClient, body: { test_spec_id: string; environment_id: string }) {
  const response = await client.post("/v1/runs", body, {
    headers: { "idempotency-key": `run-${Date.now()}-${++keys}` },
  });
  if (response.status !== 201) throw new Error(`start run: ${response.status} ${response.text}`);
  return response.body as { run_id: string };
}

/** Polls the run until it is terminal, as a CI consumer would. */
export function waitForRun(client: ApiClient, runId: string, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      const run = (await client.get(`/v1/runs/${runId}`)).body;
      return TERMINAL.has(run.status) ? run : undefined;
    },
    `run ${runId} to end`,
    { timeoutMs, everyMs: 25 },
  );
}

/** Every trace entry of a run, walked page by page. */
export async function readTrace(client: ApiClient, runId: string) {
  const events: { sequence: number; type: string; event_id: string; data: Record<string, any> }[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: typeof events; next_cursor: string | null } } = await client.get(
      `/v1/runs/${runId}/trace?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    events.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor);
  return events;
}

export function expectGapFree(events: { sequence: number; event_id: string }[]) {
  expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
  expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
}

/**
 * Follows every evidence ref in the run's evidence (gates, findings), in every evaluation, and
 * checks each answers 200: no dangling refs.
 */
export async function expectAllRefsResolve(client: ApiClient, runId: string): Promise<number> {
  const evidence = (await client.get(`/v1/runs/${runId}/evidence`)).body;
  const refs = new Set<string>(evidence.gates.flatMap((g: { evidence_refs: string[] }) => g.evidence_refs));
  let cursor: string | null = null;
  do {
    const page: { body: { data: { evidence_refs: string[] }[]; next_cursor: string | null } } = await client.get(
      `/v1/runs/${runId}/evaluations?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    for (const evaluation of page.body.data) for (const ref of evaluation.evidence_refs) refs.add(ref);
    cursor = page.body.next_cursor;
  } while (cursor);
  for (const finding of evidence.findings as { evidence_refs: string[]; finding_id: string }[]) {
    refs.add(`/v1/runs/${runId}/findings/${finding.finding_id}`);
    for (const ref of finding.evidence_refs) refs.add(ref);
  }
  for (const link of Object.values(evidence.links) as string[]) refs.add(link);
  for (const ref of refs) {
    const response = await client.get(ref);
    if (response.status !== 200) throw new Error(`evidence ref ${ref} answered ${response.status}`);
  }
  return refs.size;
}

export interface ConversationSummaryBody {
  conversation_id: string;
  kind: string;
  scenario_id: string;
  repeat_index: number;
  attempt: number;
  retry: number;
  counted: boolean;
  status: string;
}

/** Every conversation of a run, walked page by page. */
export async function readConversations(client: ApiClient, runId: string): Promise<ConversationSummaryBody[]> {
  const conversations: ConversationSummaryBody[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: ConversationSummaryBody[]; next_cursor: string | null } } = await client.get(
      `/v1/runs/${runId}/conversations?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    conversations.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor);
  return conversations;
}

/**
 * A run that ended after interruptions held each planned conversation to completion exactly once:
 * the ones cut off are kept, marked interrupted, none is left running, and a retry counts its attempt.
 */
export function expectEachHeldOnce(conversations: ConversationSummaryBody[], planned: number): { interrupted: number } {
  const completed = conversations.filter((c) => c.status === "completed");
  const keys = completed.map((c) => `${c.kind} ${c.scenario_id} ${c.repeat_index}`);
  expect(new Set(keys).size).toBe(keys.length);
  expect(completed).toHaveLength(planned);
  expect(conversations.filter((c) => c.status === "running")).toEqual([]);
  const interrupted = conversations.filter((c) => c.status === "interrupted");
  for (const cut of interrupted) {
    const retried = completed.find(
      (c) => c.kind === cut.kind && c.scenario_id === cut.scenario_id && c.repeat_index === cut.repeat_index,
    );
    expect(retried?.attempt).toBeGreaterThan(cut.attempt);
  }
  return { interrupted: interrupted.length };
}

/** Each conversation's own entries are in order in the trace: started first, then its turns and steps, then how it ended. */
export function expectConversationsInOrder(events: { sequence: number; type: string; data: Record<string, any> }[]) {
  const byConversation = new Map<string, { type: string; turn: number; step: number }[]>();
  for (const event of events) {
    const id = event.data.conversation_id as string | undefined;
    if (!id) continue;
    const list = byConversation.get(id) ?? [];
    list.push({ type: event.type, turn: event.data.turn ?? -1, step: event.data.step ?? 0 });
    byConversation.set(id, list);
  }
  for (const [, list] of byConversation) {
    expect(list[0]!.type).toBe("conversation.started");
    const body = list.slice(1).filter((e) => !e.type.startsWith("conversation."));
    const positions = body.map((e) => e.turn * 1000 + e.step);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    const ends = list.filter((e) => e.type === "conversation.completed" || e.type === "conversation.failed");
    if (ends.length > 0) expect(list.at(-1)!.type).toBe(ends[0]!.type);
  }
}
