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

/** Nothing in v1 is deprecated yet. */
export const DEPRECATIONS: readonly Deprecation[] = [];
