import { readFileSync } from "node:fs";

/**
 * Tests set the limits they exercise: every rate limit is off unless `env` sets it. The settings
 * live in limits-off.json, which the bench reads too.
 */
export const LIMITS_OFF: Record<string, string> = JSON.parse(readFileSync(new URL("./limits-off.json", import.meta.url), "utf8"));
