import { z } from "zod";
import { defineTask } from "../define-task.js";
import { LRUCache } from "lru-cache";
import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { Clock } from "../../clock.js";
import type { Run, RunStatus, TestSpecDocument, Verdict } from "../../contract/index.js";
import { FAILURE_CAUSES, RunFailedError, coerceError } from "../../errors.js";
import { toHeldConversation } from "../../evaluate/conversation-facts.js";
import { lazyConversations } from "../../evaluate/conversation-source.js";
import { evaluateRun } from "../../evaluate/evaluate-run.js";
import type { Evaluator } from "../../evaluate/evaluator.js";
import type { Judge } from "../../evaluate/judges/llm-judge.js";
import type { NewId } from "../../ids.js";
import type { Logger } from "../../log.js";
import { makeFairSlots } from "../fair-slots.js";
import { makeAgentPacers, type AgentPacer } from "../../net/agent-pacer.js";
import type { EgressPolicy } from "../../net/egress.js";
import { toLoggedEvent, type ConversationRow, type EnvironmentTarget } from "../../store/index.js";
import type { ServiceStore } from "../../store/service-store.js";
import type { WriteCommand } from "../../store/writer/commands.js";
import { AGENT_PROTOCOLS } from "../agents/index.js";
import type { AgentReply } from "../agents/types.js";
import { addAnswer, costOf, totalTokens, type ModelUsage } from "../../usage/agent-usage.js";
import { lastTries, limitsOf, planConversations, planKey, type ConversationPlan } from "../plan.js";
import { makeRecorder, type Recorder } from "../recorder.js";
import { assertTransition, isTerminal } from "../run-states.js";
import { runConversation } from "../run-conversation.js";
import type { Task } from "../worker.js";

export const EXECUTE_RUN = "execute_run";
export const EXECUTE_RUN_MAX_ATTEMPTS = 5;

export interface ExecuteRunDeps {
  store: ServiceStore;
  clock: Clock;
  newId: NewId;
  egress: EgressPolicy;
  log: Logger;
  /** The LLM judge for spec metrics, if one is configured. */
  judge?: Judge | undefined;
  /** The evaluator families every run gets; all of EVALUATORS unless given. */
  evaluators?: readonly Evaluator[] | undefined;
  /** Tests shorten the agent's retry backoff; production keeps the default. */
  agentBackoffMs?: (attempt: number) => number;
  /** Conversations held at once across every run of this process (ASSURE_MAX_CONVERSATIONS), and by one project's runs. */
  maxConversations?: number | undefined;
  maxConversationsPerProject?: number | undefined;
}

/** The job that executes a run end to end, as its project's work. Safe to run again: it picks up where a crash left it. */
export function executeRunJob(runId: string, projectId: string, now: string) {
  return {
    task: EXECUTE_RUN,
    job_key: `${EXECUTE_RUN}:${runId}`,
    payload: { run_id: runId },
    run_at: now,
    max_attempts: EXECUTE_RUN_MAX_ATTEMPTS,
    fair_key: projectId,
  };
}

export function makeExecuteRun(deps: ExecuteRunDeps): Task {
  const { store, clock, newId, log } = deps;
  const now = () => clock.now().toISOString();
  const conversationSlots = makeFairSlots({
    total: deps.maxConversations ?? 64,
    perKey: deps.maxConversationsPerProject,
  });
  const pacers = makeAgentPacers(() => clock.now().getTime());

  /**
   * Moves the run on: the move, what was recorded before it and `alsoWrite` go in one write. A
   * move that ends the run returns once it is durable; one on the way is not waited for: the
   * next awaited write makes it durable, or reports that it failed.
   */
  async function transition(
    recorder: Recorder,
    run: Run,
    to: RunStatus,
    {
      verdict = run.verdict,
      failure = null,
      alsoWrite = [],
    }: { verdict?: Verdict; failure?: Run["failure"]; alsoWrite?: readonly WriteCommand[] } = {},
  ): Promise<Run> {
    assertTransition(run.status, to);
    const at = now();
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

  /**
   * Holds every conversation the spec asks for that has not been completed yet, up to the spec's
   * concurrency at once (and the process's conversation slots; each call to the agent keeps to its
   * environment's pace); returns the ones it completed. The first conversation that fails the run
   * stops the others: they are marked interrupted, and the failure is thrown.
   */
  async function converse(
    run: Run,
    spec: TestSpecDocument,
    recorder: Recorder,
    jobSignal: AbortSignal,
    earlier: readonly ConversationRow[],
  ): Promise<ConversationRow[]> {
    const environment = store.getEnvironmentTarget(run.environment_id);
    if (!environment) throw new RunFailedError("internal_error", `Environment ${run.environment_id} no longer exists`);
    const target = { ...environment, base_url: run.agent_url ?? environment.base_url };
    const limits = limitsOf(spec);
    const deadline = Date.parse(run.started_at ?? now()) + limits.run_timeout_ms;
    const pacer = pacers.forEnvironment(environment.environment_id, {
      maxConcurrency: environment.max_concurrency,
      ratePerMinute: environment.rate_limit_per_minute,
    });
    const attemptsBefore = new Map<string, ConversationRow[]>();
    for (const row of earlier) {
      const key = planKey(row);
      attemptsBefore.set(key, [...(attemptsBefore.get(key) ?? []), row]);
    }

    // The agent's tokens and what they cost, against the spec's budget: once it is reached, no
    // conversation starts. A cost that cannot be worked out stops nothing; the budget gate says so.
    const budget = spec.defaults?.budget;
    const pricing = budget?.max_cost_usd !== undefined ? store.getRunPricing(run.run_id) : {};
    const spent: Record<string, ModelUsage> =
      (budget && earlier.length > 0 ? store.measureAgentUsage(run.run_id).by_model : undefined) ?? {};
    const meter = (reply: AgentReply) => {
      if (budget) addAnswer(spent, reply);
    };
    const reached = (): string | undefined => {
      if (budget?.max_tokens !== undefined && totalTokens(spent) >= budget.max_tokens) {
        return `The agent used ${totalTokens(spent)} tokens, reaching the run's budget of ${budget.max_tokens} (defaults.budget.max_tokens)`;
      }
      const cost = budget?.max_cost_usd !== undefined ? costOf(spent, pricing).usd : null;
      if (cost !== null && cost >= budget!.max_cost_usd!) {
        return `The agent's answers cost $${cost}, reaching the run's budget of $${budget!.max_cost_usd} (defaults.budget.max_cost_usd)`;
      }
      return undefined;
    };
    const overBudget = () => budget !== undefined && reached() !== undefined;

    // A scenario whose checks failed is tried again, up to `retry_failed` times; a probe never is.
    const retries = spec.defaults?.retry_failed ?? 0;
    const mayTryAgain = (c: ConversationRow) => c.kind === "scenario" && c.retry < retries;

    const plans = planConversations(spec, { includeProbes: true });
    /**
     * The next planned conversation not yet done, with what was held of it before (a resumed run):
     * its last completed try, when that may still be tried again. None once the budget is reached.
     */
    function takeNext({ evenOverBudget = false } = {}):
      { plan: ConversationPlan; before: ConversationRow[]; last: ConversationRow | undefined } | undefined {
      if (overBudget() && !evenOverBudget) return undefined;
      for (let next = plans.next(); !next.done; next = plans.next()) {
        const before = attemptsBefore.get(planKey(next.value)) ?? [];
        const last = lastTries(before.filter((c) => c.status === "completed"))[0];
        if (!last) return { plan: next.value, before, last: undefined };
        if (mayTryAgain(last) && last.retry_outcome !== "passed") return { plan: next.value, before, last };
      }
      return undefined;
    }

    /** Whether a try's checks of its own scenario passed, judged alone (kept, so a resumed run does not judge it again). */
    async function outcomeOf(held: ConversationRow): Promise<"passed" | "failed"> {
      if (held.retry_outcome) return held.retry_outcome;
      await recorder.flush();
      const { evaluations } = await evaluateConversations(run, spec, signal, [held]);
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

    const stop = new AbortController();
    const signal = AbortSignal.any([jobSignal, stop.signal]);
    // Each lane may wait on it in a few places at once (a conversation slot, the pace, a retry's backoff).
    setMaxListeners(4 * limits.concurrency + 16, signal);
    const completed: ConversationRow[] = [];
    let failure: { error: unknown } | undefined;
    /** Holds one try of a planned conversation in a free slot; undefined when the run stops or the budget is reached meanwhile. */
    async function hold(
      plan: ConversationPlan,
      before: readonly ConversationRow[],
      retry: number,
    ): Promise<ConversationRow | undefined> {
      const attempt = before.filter((c) => c.retry === retry).length + 1;
      // Not p-queue's signal: it would settle while the conversation still runs. The limits are
      // checked again once a slot is free, since the lane may have waited long for it.
      const held = await conversationSlots.run(run.project_id, async () => {
        if (signal.aborted || overBudget()) return undefined;
        if (clock.now().getTime() > deadline) {
          throw new RunFailedError(
            "timeout",
            `The run's deadline passed (${limits.run_timeout_ms} ms after it started) before every conversation was held`,
          );
        }
        return holdConversation(run, plan, { attempt, retry }, target, pacer, deadline, recorder, signal, meter);
      });
      if (held) completed.push(held);
      return held;
    }
    async function lane(): Promise<void> {
      for (let next = takeNext(); next && !signal.aborted; next = takeNext()) {
        const { plan, before } = next;
        let held = next.last ?? (await hold(plan, before, 0));
        while (held && mayTryAgain(held) && !signal.aborted && (await outcomeOf(held)) === "failed") {
          held = await hold(plan, before, held.retry + 1);
        }
      }
    }
    await Promise.all(
      Array.from({ length: limits.concurrency }, () =>
        lane().catch((error: unknown) => {
          if (failure || signal.aborted) return; // cut off by the first failure, or by the worker stopping
          failure = { error };
          stop.abort(new Error("another conversation of the run failed"));
        }),
      ),
    );
    if (jobSignal.aborted) throw jobSignal.reason;
    if (failure) {
      await recorder.flush(["interruptRunningConversations", run.run_id, now()]);
      throw failure.error;
    }
    if (overBudget()) {
      let left = 0;
      while (takeNext({ evenOverBudget: true })) left++;
      throw new RunFailedError(
        "budget_exceeded",
        `${reached()}${left > 0 ? `: ${left} conversation(s) were not held` : ""}`,
      );
    }
    return completed;
  }

  /** Holds one conversation; a failure that fails the run is recorded on it before it is thrown. */
  async function holdConversation(
    run: Run,
    plan: ConversationPlan,
    { attempt, retry }: { attempt: number; retry: number },
    target: EnvironmentTarget,
    pacer: AgentPacer,
    deadline: number,
    recorder: Recorder,
    signal: AbortSignal,
    onReply: (reply: AgentReply) => void,
  ): Promise<ConversationRow> {
    const agent = AGENT_PROTOCOLS[target.protocol].makeAgent({
      egress: deps.egress,
      target,
      timeoutMs: plan.timeout_ms,
      pacer,
      deadline,
      now: () => clock.now().getTime(),
      ...(deps.agentBackoffMs ? { backoffMs: deps.agentBackoffMs } : {}),
    });
    const conversation: ConversationRow = {
      conversation_id: newId("conversation"),
      run_id: run.run_id,
      kind: plan.kind,
      scenario_id: plan.scenario_id,
      repeat_index: plan.repeat_index,
      attempt,
      retry,
      retry_outcome: null,
      status: "running",
      canary: plan.canary ? `CANARY-${randomBytes(9).toString("base64url")}` : null,
      created_at: now(),
      ended_at: null,
    };
    const context = { conversation_id: conversation.conversation_id };
    recorder.record("conversation.started", {
      ...context,
      kind: plan.kind,
      scenario_id: plan.scenario_id,
      repeat_index: plan.repeat_index,
      attempt,
      ...(retry > 0 ? { retry } : {}),
    });
    recorder.flushInBackground(["createConversation", conversation]);
    try {
      await runConversation({
        plan,
        conversationId: conversation.conversation_id,
        canary: conversation.canary,
        agent,
        recorder,
        signal,
        onReply,
      });
    } catch (error) {
      if (error instanceof RunFailedError && !signal.aborted) {
        recorder.record("conversation.failed", { ...context, cause: error.failureCause });
        await recorder.flush(["finishConversation", conversation.conversation_id, "failed", now()]);
      }
      throw error;
    }
    const endedAt = now();
    recorder.record("conversation.completed", context);
    recorder.flushInBackground(["finishConversation", conversation.conversation_id, "completed", endedAt]);
    return { ...conversation, status: "completed", ended_at: endedAt };
  }

  /**
   * Judges every completed conversation, in the plan's order, from its events read back once they
   * are durable (one conversation at a time: only their facts are kept). Evaluations, findings,
   * gates and the final status are written together: a crash before that leaves the run
   * EVALUATING, to be judged again.
   */
  async function evaluate(
    run: Run,
    spec: TestSpecDocument,
    recorder: Recorder,
    signal: AbortSignal,
    completed: readonly ConversationRow[],
  ): Promise<void> {
    await recorder.flush();
    const { status, verdict, findings, evaluations, gates } = await judgeConversations(run, spec, signal, completed);
    for (const f of findings) {
      recorder.record("finding.raised", {
        finding_id: f.finding_id,
        probe_id: f.probe_id,
        category: f.category,
        severity: f.severity,
      });
    }
    for (const e of evaluations) {
      recorder.record("evaluation.completed", {
        evaluation_id: e.evaluation_id,
        kind: e.kind,
        metric_id: e.metric_id,
        status: e.status,
        score: e.score,
      });
    }
    await transition(recorder, run, status, {
      verdict,
      alsoWrite: [
        ["insertFindings", findings],
        ["insertEvaluations", evaluations],
        ["insertGateResults", gates],
      ],
    });
  }

  /**
   * The evaluation of the conversations, as the rows to store: what the conversations did, and
   * the evaluators' drafts, are no longer held once it returns (a run may have thousands).
   */
  async function judgeConversations(
    run: Run,
    spec: TestSpecDocument,
    signal: AbortSignal,
    completed: readonly ConversationRow[],
  ) {
    const { evaluations, findings, gates, status, verdict } = await evaluateConversations(run, spec, signal, completed);
    const createdAt = now();
    return {
      status,
      verdict,
      findings: findings.map((f) => ({
        ...f,
        run_id: run.run_id,
        status: "open" as const,
        created_at: createdAt,
      })),
      evaluations: evaluations.map((e) => ({
        ...e,
        run_id: run.run_id,
        created_at: createdAt,
      })),
      gates: gates.map((gate, position) => ({
        ...gate,
        run_id: run.run_id,
        position,
      })),
    };
  }

  /**
   * Evaluates the completed conversations in the plan's order, each read back from the store. Of a
   * case tried again, the checks read the last try; the earlier ones stay in the evidence, and
   * what looks at everything the agent did (detectors, the budget) reads them too.
   */
  async function evaluateConversations(
    run: Run,
    spec: TestSpecDocument,
    signal: AbortSignal,
    completed: readonly ConversationRow[],
  ) {
    const position = new Map<string, number>();
    for (const plan of planConversations(spec, { includeProbes: true })) position.set(planKey(plan), position.size);
    const eventsOf = (conversationId: string) => store.listConversationEvents(conversationId).map(toLoggedEvent);
    const inOrder = [...completed].sort(
      (a, b) => position.get(planKey(a))! - position.get(planKey(b))! || a.retry - b.retry,
    );
    const counted = new Set(lastTries(completed));
    const conversations = lazyConversations(
      inOrder,
      (c) => toHeldConversation(c, eventsOf(c.conversation_id), () => eventsOf(c.conversation_id)),
      (c) => counted.has(c),
    );
    const budgeted = spec.defaults?.budget !== undefined;
    return evaluateRun({
      runId: run.run_id,
      spec,
      conversations,
      judge: deps.judge,
      newId,
      signal,
      ...(budgeted ? { usage: store.measureAgentUsage(run.run_id), pricing: store.getRunPricing(run.run_id) } : {}),
      ...(deps.evaluators ? { evaluators: deps.evaluators } : {}),
    });
  }

  // Spec versions are immutable (content-addressed), so a document read once serves every run of it.
  const specs = new LRUCache<string, TestSpecDocument>({ max: 100 });
  function specOf(run: Run): TestSpecDocument {
    const key = `${run.test_spec_id} ${run.spec_version}`;
    let spec = specs.get(key);
    if (!spec) {
      spec = store.getSpecDocument(run.test_spec_id, run.spec_version);
      if (!spec) throw new RunFailedError("internal_error", `Spec version ${run.spec_version} no longer exists`);
      specs.set(key, spec);
    }
    return spec;
  }

  return defineTask(z.object({ run_id: z.string() }), async function executeRun({ run_id }, { job, signal }) {
    let run = store.getRun(run_id);
    if (!run || isTerminal(run.status)) return;
    const recorder = makeRecorder({ store, runId: run_id, clock, newId });
    try {
      // A run still QUEUED has held no conversation yet: nothing can have been cut off.
      const interrupted =
        run.status === "QUEUED" ? 0 : (await store.write(["interruptRunningConversations", run_id, now()]))[0];
      if (job.attempts > 1 || interrupted > 0) {
        recorder.record("run.resumed", {
          attempt: job.attempts,
          interrupted_conversations: interrupted,
          reason: job.last_error,
        });
      }
      if (job.attempts > job.max_attempts) {
        throw new RunFailedError("internal_error", `The run was interrupted ${job.attempts - 1} times; giving up`);
      }
      const spec = specOf(run);
      const earlier = run.status === "QUEUED" ? [] : store.listRunConversations(run_id);
      const completed = earlier.filter((c) => c.status === "completed");
      if (run.status === "QUEUED") run = await transition(recorder, run, "RUNNING");
      if (run.status === "RUNNING") {
        completed.push(...(await converse(run, spec, recorder, signal, earlier)));
        run = await transition(recorder, run, "EVALUATING");
      }
      await evaluate(run, spec, recorder, signal, completed);
    } catch (raw) {
      if (signal.aborted) return; // stopped or lost the lease: the job goes back to the queue and resumes later
      const error = raw instanceof RunFailedError ? raw : undefined;
      if (!error && job.attempts < job.max_attempts) throw raw; // retried with backoff by the worker
      const failure = error
        ? { cause: error.failureCause, message: error.message }
        : { cause: "internal_error" as const, message: `Unexpected error: ${coerceError(raw).message}` };
      if (!error) log.error({ err: coerceError(raw), run_id }, `Run ${run_id} failed on an internal error`);
      await recorder.settle();
      const current = store.getRun(run_id)!;
      if (!isTerminal(current.status)) {
        await transition(recorder, current, "FAILED", { verdict: FAILURE_CAUSES[failure.cause].verdict, failure });
      }
    }
  });
}
