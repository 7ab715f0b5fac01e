import { isDeepStrictEqual } from "node:util";

/**
 * True when `actual` has every key of `expected` with an equal value, recursively for nested
 * objects; arrays and scalars must be equal. `{order_id: "A-100"}` matches
 * `{order_id: "A-100", reason: "broken"}`.
 */
export function partialMatch(expected: unknown, actual: unknown): boolean {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([key, value]) =>
      Object.hasOwn(actual, key) ? partialMatch(value, (actual as Record<string, unknown>)[key]) : false,
    );
  }
  return isDeepStrictEqual(expected, actual);
}
