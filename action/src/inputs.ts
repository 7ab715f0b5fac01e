import * as core from "@actions/core";
import { ASSURE_CONFIG_PATH } from "../../server/contract/index.js";

/** What the workflow asked for, read once from the step's `with:`. */
export interface ActionInputs {
  apiUrl: string;
  configPath: string;
  /** Given instead of a config: spec paths or globs, and environment names. */
  specs: string[];
  environments: string[];
  project: string | undefined;
  token: string | undefined;
  /** The workflow's GitHub token: reads the pull request's base branch. */
  githubToken: string | undefined;
  agentUrl: string | undefined;
  /** service: the service executes the runs; in-job: this step holds them against agent-url and uploads them. */
  execute: "service" | "in-job";
  /** Headers for the agent in the job (`Name: value` per line). */
  agentHeaders: Record<string, string>;
  wait: boolean;
  timeoutMs: number;
  failOn: "blocked" | "never";
  newAttempt: boolean;
}

export class InputError extends Error {
  override name = "InputError";
}

/** A list input: one item per line or comma-separated. */
const list = (name: string) =>
  core
    .getInput(name)
    .split(/[\n,]/)
    .map((item) => item.trim())
    .filter(Boolean);

export function readInputs(): ActionInputs {
  const apiUrl = core.getInput("api-url", { required: true }).replace(/\/+$/, "");
  if (!URL.canParse(apiUrl) || !/^https?:$/.test(new URL(apiUrl).protocol)) {
    throw new InputError(`api-url must be an http(s) URL, not '${apiUrl}'.`);
  }
  const agentUrl = core.getInput("agent-url") || undefined;
  if (agentUrl !== undefined && (!URL.canParse(agentUrl) || !/^https?:$/.test(new URL(agentUrl).protocol))) {
    throw new InputError(`agent-url must be an http(s) URL, not '${agentUrl}'.`);
  }
  const timeoutSeconds = Number(core.getInput("timeout-seconds") || "900");
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds <= 0) {
    throw new InputError(`timeout-seconds must be a positive whole number, not '${core.getInput("timeout-seconds")}'.`);
  }
  const failOn = core.getInput("fail-on") || "blocked";
  if (failOn !== "blocked" && failOn !== "never") {
    throw new InputError(`fail-on must be 'blocked' or 'never', not '${failOn}'.`);
  }
  const specs = list("specs");
  const environments = list("environments");
  if (specs.length > 0 !== environments.length > 0) {
    throw new InputError("Give specs and environments together (or neither, to read them from the config).");
  }
  const execute = core.getInput("execute") || "service";
  if (execute !== "service" && execute !== "in-job") {
    throw new InputError(`execute must be 'service' or 'in-job', not '${execute}'.`);
  }
  if (execute === "in-job" && !agentUrl) {
    throw new InputError("execute: in-job needs agent-url: the agent this job started, e.g. http://localhost:8080/v1.");
  }
  const agentHeaders = readHeaders(core.getMultilineInput("agent-headers"));
  const token = core.getInput("token") || undefined;
  if (token) core.setSecret(token);
  return {
    apiUrl,
    configPath: core.getInput("config") || ASSURE_CONFIG_PATH,
    specs,
    environments,
    project: core.getInput("project") || undefined,
    token,
    githubToken: core.getInput("github-token") || undefined,
    agentUrl: agentUrl?.replace(/\/+$/, ""),
    execute,
    agentHeaders,
    wait: (core.getInput("wait") || "true") === "true",
    timeoutMs: timeoutSeconds * 1000,
    failOn,
    newAttempt: (core.getInput("new-attempt") || "false") === "true",
  };
}

/** `Name: value` lines as headers; each value is masked in the log. */
function readHeaders(lines: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [i, line] of lines.entries()) {
    const match = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*:\s*(.*)$/.exec(line.trim());
    // The line is not echoed: it may be a secret written without its name.
    if (!match) throw new InputError(`agent-headers: line ${i + 1} is not 'Name: value'.`);
    const value = match[2]!;
    headers[match[1]!] = value;
    // Masked whole, and the credential after a scheme (`Bearer …`) on its own, should it be printed alone.
    for (const secret of [value, value.replace(/^\S+\s+/, "")]) if (secret) core.setSecret(secret);
  }
  return headers;
}
