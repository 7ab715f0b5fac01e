import type { TestSpecDocument } from "../contract/index.js";
import type { ConversationRow } from "../store/index.js";
import { lastTries, planConversations, planKey, type ConversationPlan } from "./plan.js";

/** A planned conversation to hold, with what was held of it before (a resumed run). */
export interface NextConversation {
  plan: ConversationPlan;
  /** Its earlier tries, of every attempt. */
  before: ConversationRow[];
  /** Its last completed try, when that may still be tried again: the lane goes on from it. */
  last: ConversationRow | undefined;
}

/**
 * What is left to hold of a run's plan, in the plan's order: each planned conversation not yet
 * completed, or whose last try may be tried again. A scenario whose checks failed is tried again,
 * up to the spec's `retry_failed` times; a probe never is.
 */
export function makePlanQueue(spec: TestSpecDocument, earlier: readonly ConversationRow[]) {
  const attemptsBefore = new Map<string, ConversationRow[]>();
  for (const row of earlier) {
    const key = planKey(row);
    attemptsBefore.set(key, [...(attemptsBefore.get(key) ?? []), row]);
  }
  const retries = spec.defaults?.retry_failed ?? 0;
  const mayTryAgain = (c: ConversationRow) => c.kind === "scenario" && c.retry < retries;
  const plans = planConversations(spec, { includeProbes: true });

  function next(): NextConversation | undefined {
    for (let planned = plans.next(); !planned.done; planned = plans.next()) {
      const before = attemptsBefore.get(planKey(planned.value)) ?? [];
      const last = lastTries(before.filter((c) => c.status === "completed"))[0];
      if (!last) return { plan: planned.value, before, last: undefined };
      if (mayTryAgain(last) && last.retry_outcome !== "passed") return { plan: planned.value, before, last };
    }
    return undefined;
  }

  return {
    next,
    /** Whether a try may be tried again when its checks failed. */
    mayTryAgain,
    /** Takes what is left, and counts it (a run that stops early says how many were not held). */
    countLeft(): number {
      let left = 0;
      while (next()) left++;
      return left;
    },
  };
}

export type PlanQueue = ReturnType<typeof makePlanQueue>;
