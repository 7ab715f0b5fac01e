import type { JsonValue } from "./primitives.js";

/**
 * Scenarios from tables: a scenario with `vars` is played once per row, `{{name}}` in its text,
 * expectations and the tools' mocks filled from the row. A value that is exactly one
 * placeholder takes the row's value as it is (a number stays a number); inside longer text it
 * is written in (objects as JSON).
 */

/** One row of a scenario's table: column name → value. */
export type VarsRow = Record<string, JsonValue>;

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;
const ONLY_PLACEHOLDER = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}$/;

/** At most this many conversations a spec may ask for, tables and repeats expanded. */
export const MAX_CONVERSATIONS_PER_SPEC = 10_000;

/**
 * The most agent calls a spec may ask for: every conversation (rows × repeats, probes' repeats),
 * every user turn of it, every step a turn may take, every try. A run that could call its agent
 * more is refused at upload, whatever its deadline.
 */
export const MAX_AGENT_CALLS_PER_SPEC = 200_000;

/** The most agent calls a spec could make, by the count above. */
export function countAgentCalls(spec: {
  defaults?:
    { repeat?: number | undefined; max_steps?: number | undefined; retry_failed?: number | undefined } | undefined;
  scenarios?:
    | readonly {
        vars?: readonly unknown[] | undefined;
        repeat?: number | undefined;
        turns: readonly unknown[];
        max_steps?: number | undefined;
      }[]
    | undefined;
  security?: readonly { repeat?: number | undefined; next_turns?: readonly unknown[] | undefined }[] | undefined;
}): number {
  const repeat = spec.defaults?.repeat ?? 1;
  const steps = spec.defaults?.max_steps ?? 8;
  const tries = 1 + (spec.defaults?.retry_failed ?? 0);
  let calls = 0;
  for (const scenario of spec.scenarios ?? []) {
    calls +=
      (scenario.vars?.length ?? 1) *
      (scenario.repeat ?? repeat) *
      scenario.turns.length *
      (scenario.max_steps ?? steps) *
      tries;
  }
  for (const probe of spec.security ?? []) calls += (probe.repeat ?? 1) * (1 + (probe.next_turns?.length ?? 0)) * steps;
  return calls;
}

/** The parts of a scenario its table fills in; ids, limits and the table itself are not templates. */
export const TEMPLATED_SCENARIO_FIELDS = ["system", "turns", "expect", "metrics"] as const;

/** The names of every `{{name}}` in a value, however deep. */
export function placeholdersIn(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === "string") {
    for (const match of value.matchAll(PLACEHOLDER)) into.add(match[1]!);
  } else if (Array.isArray(value)) {
    for (const item of value) placeholdersIn(item, into);
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) placeholdersIn(item, into);
  }
  return into;
}

const written = (value: JsonValue) => (typeof value === "string" ? value : JSON.stringify(value));

/** `value` with each `{{name}}` the row has filled in; a placeholder the row lacks stays as it is. */
export function fillPlaceholders<T>(value: T, row: VarsRow): T {
  if (typeof value === "string") {
    const only = ONLY_PLACEHOLDER.exec(value);
    if (only && Object.hasOwn(row, only[1]!)) return row[only[1]!] as T;
    return value.replace(PLACEHOLDER, (text, name: string) =>
      Object.hasOwn(row, name) ? written(row[name]!) : text,
    ) as T;
  }
  if (Array.isArray(value)) return value.map((item: unknown) => fillPlaceholders(item, row)) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillPlaceholders(item, row)])) as T;
  }
  return value;
}

/** A row's key in its scenario's ids (`refund[key]`): its `id` column, else its 1-based number. */
export function rowKey(row: VarsRow, index: number): string {
  const id = row.id;
  return typeof id === "string" || typeof id === "number" ? String(id) : String(index + 1);
}

/** The id of the scenario a row plays: `refund[A-1001]`. */
export const rowScenarioId = (scenarioId: string, key: string) => `${scenarioId}[${key}]`;

/** Conversations a spec asks for: each scenario's rows (one without a table) times its repeats, and the probes' repeats. */
export function countConversations(spec: {
  defaults?: { repeat?: number | undefined } | undefined;
  scenarios?: readonly { vars?: readonly unknown[] | undefined; repeat?: number | undefined }[] | undefined;
  security?: readonly { repeat?: number | undefined }[] | undefined;
}): number {
  const repeat = spec.defaults?.repeat ?? 1;
  let count = 0;
  for (const scenario of spec.scenarios ?? []) count += (scenario.vars?.length ?? 1) * (scenario.repeat ?? repeat);
  for (const probe of spec.security ?? []) count += probe.repeat ?? 1;
  return count;
}
