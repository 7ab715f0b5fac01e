import { readFileSync } from "node:fs";

/**
 * What tests and benches run the service with: every rate limit off unless `env` sets it, and
 * this machine's loopback open to egress (their agents, judges and receivers listen there). The
 * settings live in local-settings.json, which the bench reads too.
 */
export const LOCAL_SETTINGS: Record<string, string> = JSON.parse(
  readFileSync(new URL("./local-settings.json", import.meta.url), "utf8"),
);
