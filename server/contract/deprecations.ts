/**
 * What v1 deprecates, declared once: an operation (by its operationId) or a response field (a
 * property of a component of the OpenAPI document, `Run.agent_version`), with the day it was
 * deprecated and its sunset, at least six months later. The OpenAPI document marks each
 * `deprecated: true`, and every response of an operation that uses one carries the
 * `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) headers. docs/api.md lists them.
 */
export type Deprecation = (
  { operation: string; field?: never } | { field: `${string}.${string}`; operation?: never }
) & {
  /** The day it was deprecated, YYYY-MM-DD. */
  since: string;
  /** The day it may be removed, YYYY-MM-DD. */
  sunset: string;
  /** What to use instead. */
  instead: string;
};

export const DEPRECATIONS: readonly Deprecation[] = [
  // A gate is `gate_id` wherever it is named: in a decision's reasons, a waiver, a run's evidence.
  { field: "Gate.id", since: "2026-11-27", sunset: "2027-06-01", instead: "gate_id" },
];
