import { z } from "zod";
import { defineExpectationKind } from "./define.js";

/** Every agent call answered within `max` ms; the score is the share that did. */
export const latencyMs = defineExpectationKind({
  name: "latency_ms",
  args: z.strictObject({ max: z.number().int().positive() }),
  check({ max }, facts) {
    const slow = facts.replies.filter((reply) => reply.latency_ms > max);
    const total = facts.replies.length;
    const score = total === 0 ? 1 : (total - slow.length) / total;
    return slow.length === 0
      ? {
          holds: true,
          score,
          reason: `all ${total} agent call(s) answered within ${max} ms`,
          sequences: facts.replies.map((r) => r.sequence),
        }
      : {
          holds: false,
          score,
          reason: `${slow.length} of ${total} agent call(s) took longer than ${max} ms`,
          sequences: slow.map((r) => r.sequence),
        };
  },
});
