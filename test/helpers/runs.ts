import { expect } from "@jest/globals";
import type { ApiClient } from "./api-client.js";
import { waitFor } from "./wait.js";

const TERMINAL = new Set(["COMPLETED", "INCONCLUSIVE", "FAILED"]);
let keys = 0;

export async function startRun(client: ApiClient, body: { test_spec_id: string; environment_id: string }) {
  const response = await client.post("/v1/runs", body, { headers: { "idempotency-key": `run-${Date.now()}-${++keys}` } });
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
