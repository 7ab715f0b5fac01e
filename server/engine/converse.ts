import type { Clock } from "../clock.js";
import type { Run, TestSpecDocument } from "../contract/index.js";
import { RunFailedError } from "../errors.js";
import type { EgressPolicy } from "../net/egress.js";
import type { ConversationRow } from "../store/index.js";
import type { ServiceStore } from "../store/service-store.js";
import { AGENT_PROTOCOLS } from "./agents/index.js";
import { makeBudgetMeter } from "./budget-meter.js";
import type { ConversationLanes, Lane } from "./conversation-lanes.js";
import { evaluateConversations, type EvaluateConversationsDeps } from "./evaluate-conversations.js";
import { holdConversation } from "./hold-conversation.js";
import { limitsOf, type ConversationPlan } from "./plan.js";
import { makePlanQueue } from "./plan-queue.js";
import type { McpConversations } from "./mcp-conversations.js";
import type { Recorder } from "./recorder.js";
import type { LiveTraces } from "./traces/live-traces.js";

export interface ConverseDeps extends EvaluateConversationsDeps {
  store: ServiceStore;
  clock: Clock;
  egress: EgressPolicy;
  lanes: ConversationLanes;
  /** Serves the spec's tools over MCP to agents that run their own; none without a public base URL. */
  mcp?: McpConversations | undefined;
  /** The conversations whose agents' OTLP spans are being attached (POST /otlp/v1/traces). */
  liveTraces?: LiveTraces | undefined;
  /** Tests shorten the agent's retry backoff; production keeps the default. */
  agentBackoffMs?: ((attempt: number) => number) | undefined;
}

export interface ConverseOptions {
  run: Run;
  spec: TestSpecDocument;
  recorder: Recorder;
  /** The job's. */
  signal: AbortSignal;
  /** The conversations the run held before (a resumed run): what they completed is not held again. */
  earlier: readonly ConversationRow[];
}

/**
 * Holds every conversation the spec asks for that has not been completed yet, up to the spec's
 * concurrency at once (and the process's conversation slots; each call to the agent keeps to its
 * environment's pace); returns the ones it completed. The first conversation that fails the run
 * stops the others: they are marked interrupted, and the failure is thrown.
 */
export async function converse(
  deps: ConverseDeps,
  { run, spec, recorder, signal: jobSignal, earlier }: ConverseOptions,
): Promise<ConversationRow[]> {
  const { store, clock, lanes } = deps;
  const now = () => clock.now().toISOString();
  const environment = await store.getEnvironmentTarget(run.environment_id);
  if (!environment) throw new RunFailedError("internal_error", `Environment ${run.environment_id} no longer exists`);
  const target = { ...environment, base_url: run.agent_url ?? environment.base_url };
  const protocol = AGENT_PROTOCOLS[target.protocol];
  if (protocol.sendsMcpUrl?.(target) && !deps.mcp?.enabled) {
    throw new RunFailedError(
      "internal_error",
      "The environment sends the agent an MCP URL ({{mcp_url}} or mcp_url_header), but the service has no public base URL to build it from: set ASSURE_BASE_URL",
    );
  }
  const limits = limitsOf(spec);
  const deadline = Date.parse(run.started_at ?? now()) + limits.run_timeout_ms;
  const pacer = lanes.pacerOf(environment);
  const budget = await makeBudgetMeter(store, {
    runId: run.run_id,
    budget: spec.defaults?.budget,
    resumed: earlier.length > 0,
  });
  const queue = makePlanQueue(spec, earlier);
  const completed: ConversationRow[] = [];

  /** Whether a try's checks of its own scenario passed, judged alone (kept, so a resumed run does not judge it again). */
  async function outcomeOf(held: ConversationRow, signal: AbortSignal): Promise<"passed" | "failed"> {
    if (held.retry_outcome) return held.retry_outcome;
    await recorder.flush();
    const { evaluations } = await evaluateConversations(deps, { run, spec, signal, completed: [held] });
    const failed = evaluations.some(
      (e) =>
        e.scenario_id === held.scenario_id &&
        (e.kind === "expectation" || e.kind === "metric") &&
        e.status === "failed",
    );
    const outcome = failed ? "failed" : "passed";
    recorder.flushInBackground(["setRetryOutcome", held.conversation_id, outcome]);
    return outcome;
  }

  /** Conversations whose agent has answered, waiting for its late spans: the lanes go on meanwhile. */
  const ending = new Set<Promise<void>>();
  let endFailure: { error: unknown } | undefined;

  /**
   * Holds one try of a planned conversation in a free slot, until the agent answered its last turn;
   * undefined when the run stops or the budget is reached meanwhile. A try that may be tried again
   * is returned completed (its checks decide); any other ends in the background (the wait for its
   * agent's late spans asks nothing of the agent) and is returned as it is.
   */
  async function hold(
    lane: Lane,
    plan: ConversationPlan,
    before: readonly ConversationRow[],
    retry: number,
  ): Promise<ConversationRow | undefined> {
    const attempt = before.filter((c) => c.retry === retry).length + 1;
    const held = await lane.inSlot(() => {
      const agent = protocol.makeAgent({
        egress: deps.egress,
        target,
        timeoutMs: plan.timeout_ms,
        pacer,
        deadline,
        now: () => clock.now().getTime(),
        ...(deps.agentBackoffMs ? { backoffMs: deps.agentBackoffMs } : {}),
      });
      const { signal } = lane;
      return holdConversation(deps, {
        run,
        plan,
        attempt,
        retry,
        agent,
        toolsRunBy: protocol.toolsRunBy,
        recorder,
        signal,
        onReply: budget.meter,
        traceWaitMs: target.trace_wait_ms ?? undefined,
      });
    });
    if (!held) return undefined;
    const ended = held.ending.then((row) => {
      completed.push(row);
      return row;
    });
    if (queue.mayTryAgain(held.conversation)) return ended;
    const settled: Promise<void> = ended.then(
      () => undefined,
      (error: unknown) => void (endFailure ??= { error }),
    );
    ending.add(settled);
    void settled.then(() => ending.delete(settled));
    return held.conversation;
  }

  // Nothing is taken from the plan once the budget is reached.
  const takeNext = () => (budget.reached() === undefined ? queue.next() : undefined);
  try {
    await lanes.run({
      projectId: run.project_id,
      concurrency: limits.concurrency,
      signal: jobSignal,
      deadline,
      timeoutMs: limits.run_timeout_ms,
      mayStart: () => budget.reached() === undefined,
      async lane(lane) {
        for (let next = takeNext(); next && !lane.signal.aborted; next = takeNext()) {
          const { plan, before } = next;
          let held = next.last ?? (await hold(lane, plan, before, 0));
          while (
            held &&
            queue.mayTryAgain(held) &&
            !lane.signal.aborted &&
            (await outcomeOf(held, lane.signal)) === "failed"
          ) {
            held = await hold(lane, plan, before, held.retry + 1);
          }
        }
      },
    });
    while (ending.size > 0) await Promise.all(ending);
    if (endFailure) throw endFailure.error;
  } catch (error) {
    while (ending.size > 0) await Promise.all(ending);
    // A conversation failed the run: the others it cut off are marked interrupted.
    if (!jobSignal.aborted) await recorder.flush(["interruptRunningConversations", run.run_id, now()]);
    throw error;
  }
  const reached = budget.reached();
  if (reached !== undefined) {
    const left = queue.countLeft();
    throw new RunFailedError(
      "budget_exceeded",
      `${reached}${left > 0 ? `: ${left} conversation(s) were not held` : ""}`,
    );
  }
  return completed;
}
