/**
 * Every scope a key can carry. Read never implies write: each is granted on its own.
 * The first six are the API specification's; the rest cover management.
 */
export const SCOPES = [
  "runs:read",
  "runs:execute",
  "specs:read",
  "specs:write",
  "evidence:read",
  "releases:read",
  "releases:write",
  "releases:waive",
  "projects:read",
  "projects:write",
  "agents:read",
  "agents:write",
  "environments:read",
  "environments:write",
  "webhooks:read",
  "webhooks:write",
  "audit:read",
  "traces:write",
] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes that only make sense for an admin key (not bound to one project). */
export const ADMIN_ONLY_SCOPES: readonly Scope[] = ["projects:write"];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
