import type { TestSpecDocument } from "./document.js";

export const DEFAULT_LIMITS = {
  max_steps: 8,
  timeout_ms: 30_000,
  repeat: 1,
  concurrency: 8,
  run_timeout_ms: 6 * 3_600_000,
} as const;

/** The spec's run limits, its defaults filled in. */
export function limitsOf(spec: TestSpecDocument): { -readonly [K in keyof typeof DEFAULT_LIMITS]: number } {
  return { ...DEFAULT_LIMITS, ...spec.defaults };
}
