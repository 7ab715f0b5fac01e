import { defineEvaluationKind } from "./define.js";

/** A metric of a scenario, scored by the LLM judge and named by its own id: a case per metric. */
export const metric = defineEvaluationKind({
  name: "metric",
  prefix: null,
  cases: {
    *inScenario(scenario) {
      for (const [m, metric] of (scenario.metrics ?? []).entries()) {
        yield {
          where: `metrics[${m}]`,
          locator: locator(metric.id),
          metric_id: metric.id,
          check: { metric },
          // Its threshold is compared on its own.
          definition: { criteria: metric.criteria, scope: metric.scope },
        };
      }
    },
    locatorOf: ({ metric_id }) => locator(metric_id),
    scored: true,
  },
});

const locator = (metricId: string) => `metric ${metricId}`;
