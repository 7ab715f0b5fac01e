import type { ReleaseDecision } from "../../server/contract/index.js";
import type { AssureClient } from "./assure-client.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls the decision until it is decided or the deadline passes, with backoff (2 s, growing to
 * 15 s), printing one line per change of a run's status. Returns the last decision seen.
 */
export async function waitForDecision(
  client: AssureClient,
  decision: ReleaseDecision,
  { deadline, label, log }: { deadline: number; label: (runId: string) => string; log: (line: string) => void },
): Promise<{ decision: ReleaseDecision; timedOut: boolean }> {
  const seen = new Map<string, string>();
  const report = (current: ReleaseDecision) => {
    for (const run of current.runs.filter((r) => r.planned)) {
      if (seen.get(run.run_id) === run.status) continue;
      seen.set(run.run_id, run.status);
      log(`${label(run.run_id)}: ${run.status}${run.verdict !== "PENDING" ? ` (${run.verdict})` : ""}`);
    }
  };
  let current = decision;
  let delay = 2000;
  report(current);
  while (current.status === "PENDING") {
    if (Date.now() + delay > deadline) return { decision: current, timedOut: true };
    await sleep(delay);
    delay = Math.min(15_000, Math.round(delay * 1.5));
    ({ body: current } = await client.get<ReleaseDecision>(`/v1/release-decisions/${current.decision_id}`));
    report(current);
  }
  return { decision: current, timedOut: false };
}
