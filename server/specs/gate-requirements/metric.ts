import { z } from "zod";
import { decideRate, percent } from "../pass-rate.js";
import { Fraction, LocalId } from "../primitives.js";
import { scenarioCases } from "../scenario-cases.js";
import type { TestSpecDocument } from "../document-shape.js";
import type { GateRequirement, Named } from "./define.js";

const fields = {
  metric: LocalId.optional(),
  min_pass_rate: Fraction.optional(),
  confidence: z.number().min(0.5).max(0.999).optional(),
};

/**
 * `metric: <id>` with `min_pass_rate` (and `confidence`): the pass rate of every sample of a judged
 * metric, in every scenario (and row) that has it, against a bar — the observed rate, or its Wilson
 * interval at a confidence.
 */
export const metric: GateRequirement<typeof fields, Named<typeof fields, "metric">> = {
  name: "metric",
  fields,
  synopsis: "metric (with min_pass_rate)",
  refine(require, problem) {
    if (require.min_pass_rate === undefined) problem(["min_pass_rate"], "a metric gate needs min_pass_rate");
  },
  checkReferences({ metric }, spec, problem) {
    if (!(spec.scenarios ?? []).some((scenario) => scenario.metrics?.some((m) => m.id === metric))) {
      problem(["metric"], `metric '${metric}' is not defined by any scenario`);
    }
  },
  decide({ metric, min_pass_rate: minPassRate = 1, confidence }, run) {
    if (!run.judgeConfigured) {
      return {
        status: "inconclusive",
        reason: `metric '${metric}' needs an LLM judge; none is configured (ASSURE_JUDGE_BASE_URL, ASSURE_JUDGE_MODEL): not evaluated`,
        evidence_refs: [],
      };
    }
    const samples = run.evaluations("metric").filter((e) => e.metric_id === metric);
    if (samples.length === 0) {
      return {
        status: "inconclusive",
        reason: `metric '${metric}' has no samples: no conversation completed`,
        evidence_refs: [],
      };
    }
    const unjudged = samples.filter((e) => e.status === "inconclusive" || e.status === "errored");
    if (unjudged.length > 0) {
      return {
        status: "inconclusive",
        reason: `${unjudged.length} of ${samples.length} sample(s) of '${metric}' could not be judged`,
        evidence_refs: run.cite.evaluations(unjudged),
      };
    }
    const passes = samples.filter((e) => e.status === "passed").length;
    const rate = passes / samples.length;
    const failing = samples.filter((e) => e.status === "failed");
    const observed = `${passes}/${samples.length} sample(s) passed (${percent(rate)}); the bar is ${percent(minPassRate)}`;
    if (confidence === undefined) {
      return rate >= minPassRate
        ? { status: "passed", reason: observed, evidence_refs: run.cite.evaluations(samples) }
        : { status: "failed", reason: observed, evidence_refs: run.cite.evaluations(failing) };
    }
    const decision = decideRate(passes, samples.length, minPassRate, confidence);
    const interval = `${percent(confidence)} Wilson interval [${percent(decision.lower)}, ${percent(decision.upper)}]`;
    if (decision.status === "passed") {
      return {
        status: "passed",
        reason: `${observed}; ${interval} clears it`,
        evidence_refs: run.cite.evaluations(samples),
      };
    }
    if (decision.status === "failed") {
      return {
        status: "failed",
        reason: `${observed}; ${interval} is below it`,
        evidence_refs: run.cite.evaluations(failing),
      };
    }
    const settle =
      decision.samplesToSettle === null
        ? "more samples at this rate would not settle it"
        : `about ${decision.samplesToSettle - samples.length} more sample(s) at this rate would settle it`;
    return {
      status: "inconclusive",
      reason: `${observed}; ${interval} straddles it: ${settle}`,
      evidence_refs: run.cite.evaluations(samples),
    };
  },
  covers:
    ({ metric }) =>
    (c) =>
      c.kind === "metric" && c.metric_id === metric,
  describe: ({ metric }) => `metric ${metric}`,
  *loosened(base, head, gateId) {
    if (base.min_pass_rate !== undefined && (head.min_pass_rate ?? 0) < base.min_pass_rate) {
      yield {
        field: "min_pass_rate",
        message: `min_pass_rate of '${gateId}' lowered from ${base.min_pass_rate} to ${head.min_pass_rate ?? 0}`,
      };
    }
    if (base.confidence !== undefined && (head.confidence ?? 0) < base.confidence) {
      yield {
        field: "confidence",
        message: `confidence of '${gateId}' lowered from ${base.confidence} to ${head.confidence ?? "none (the observed rate alone)"}`,
      };
    }
  },
  /**
   * Samples the head adds — a new scenario or row with the metric, more repeats of one — can carry a
   * failing one over the bar without the agent changing.
   */
  *recounted({ metric, min_pass_rate }, gateId, base, head) {
    if (min_pass_rate === undefined) return;
    const was = samplesOf(base, metric);
    const added = [...samplesOf(head, metric)].filter(([id, repeat]) => repeat > (was.get(id) ?? 0)).map(([id]) => id);
    if (added.length > 0) {
      yield {
        field: "metric",
        message: `the gate '${gateId}' would count more samples of '${metric}' (${added.slice(0, 5).join(", ")}${added.length > 5 ? ` and ${added.length - 5} more` : ""}): approve it if they do not carry failing ones over the bar`,
      };
    }
  },
};

/** Each scenario case (a table's row) that has the metric, with its repeats. */
function samplesOf(spec: TestSpecDocument, metric: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const c of scenarioCases(spec)) {
    if (c.scenario.metrics?.some((m) => m.id === metric)) {
      samples.set(c.id, c.scenario.repeat ?? spec.defaults?.repeat ?? 1);
    }
  }
  return samples;
}
