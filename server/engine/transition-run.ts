import type { Clock } from "../clock.js";
import type { Run, RunStatus, Verdict } from "../contract/index.js";
import type { Logger } from "../log.js";
import type { WriteCommand } from "../store/writer/commands.js";
import type { Recorder } from "./recorder.js";
import { assertTransition, isTerminal } from "./run-states.js";

export interface TransitionOptions {
  verdict?: Verdict;
  failure?: Run["failure"];
  /** Written in the same commit as the move. */
  alsoWrite?: readonly WriteCommand[];
}

/**
 * Moves the run on: the move, what was recorded before it and `alsoWrite` go in one write. A
 * move that ends the run returns once it is durable; one on the way is not waited for: the
 * next awaited write makes it durable, or reports that it failed.
 */
export async function transitionRun(
  { recorder, clock, log }: { recorder: Recorder; clock: Clock; log: Logger },
  run: Run,
  to: RunStatus,
  { verdict = run.verdict, failure = null, alsoWrite = [] }: TransitionOptions = {},
): Promise<Run> {
  assertTransition(run.status, to);
  const at = clock.now().toISOString();
  recorder.record("run.status_changed", { from: run.status, to, verdict, ...(failure ? { failure } : {}) });
  const move: WriteCommand = [
    "transitionRun",
    { run_id: run.run_id, from: run.status, to, terminal: isTerminal(to), verdict, failure, now: at },
  ];
  log.info(
    { run_id: run.run_id },
    `Run ${run.run_id}: ${run.status} → ${to}${to === "FAILED" ? ` (${failure?.cause})` : ""}`,
  );
  // A run that ends may decide a release: the decisions that wait for it are decided again in its commit.
  if (isTerminal(to)) {
    return (await recorder.flush(move, ...alsoWrite, ["refreshDecisionsOfRun", run.run_id, at]))[0] as Run;
  }
  recorder.flushInBackground(move, ...alsoWrite);
  return { ...run, status: to, verdict, failure }; // what the engine goes on from; the stored row follows
}
