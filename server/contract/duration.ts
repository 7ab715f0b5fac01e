/** A duration as people write one: a whole number and a unit, `90s`, `30m`, `2h`, `90d`. */
const DURATION = /^([1-9]\d{0,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The units a duration may take. */
export type DurationUnit = keyof typeof UNIT_MS;

/** Milliseconds of a duration such as `90s`, `30m`, `2h` or `90d` in one of `units`; undefined if it is not one. */
export function parseDuration(text: string, units: readonly DurationUnit[] = ["s", "m", "h", "d"]): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match || !units.includes(match[2] as DurationUnit)) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as DurationUnit];
}
