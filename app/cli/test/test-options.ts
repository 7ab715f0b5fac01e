import { parseArgs, parseEnv } from "node:util";
import { parse as parseYaml } from "yaml";
import { EndpointProtocol } from "../../../server/contract/index.js";
import { LocalEndpoint } from "../../../server/local/local-environment.js";
import { InputError, UsageError } from "../exit-codes.js";
import { readInputFile } from "../project-files.js";
import type { CaseSelection } from "./select-cases.js";
import type { UploadTarget } from "./upload.js";

export const FAIL_ON = ["blocked", "failed", "never"] as const;
export type FailOn = (typeof FAIL_ON)[number];

export interface TestOptions {
  /** Spec files given on the command line; none: the config's. */
  specs: string[];
  endpoint: LocalEndpoint;
  config: string | undefined;
  selection: CaseSelection;
  /** The process environment with the env files' variables under it, without ASSURE_DB. */
  env: Record<string, string | undefined>;
  db: string | undefined;
  json: string | undefined;
  junit: string | undefined;
  open: boolean;
  port: number;
  watch: boolean;
  failOn: FailOn;
  quiet: boolean;
  /** `--upload URL`: where to send the runs to be judged again, and as whom. */
  upload: UploadTarget | undefined;
}

const OPTIONS = {
  agent: { type: "string" },
  protocol: { type: "string" },
  model: { type: "string" },
  header: { type: "string", multiple: true },
  "readiness-path": { type: "string" },
  endpoint: { type: "string" },
  config: { type: "string" },
  scenario: { type: "string", multiple: true },
  repeat: { type: "string" },
  concurrency: { type: "string" },
  "env-file": { type: "string", multiple: true },
  db: { type: "string" },
  json: { type: "string" },
  junit: { type: "string" },
  open: { type: "boolean" },
  port: { type: "string" },
  watch: { type: "boolean" },
  "fail-on": { type: "string" },
  quiet: { type: "boolean" },
  upload: { type: "string" },
  environment: { type: "string" },
  project: { type: "string" },
  repository: { type: "string" },
  commit: { type: "string" },
} as const;

function integer(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new UsageError(`--${name} takes a whole number from ${min} to ${max}, not '${text}'`);
  }
  return value;
}

/** `${NAME}` in a header value, read from the environment (so a secret need not be on the command line). */
function expandVariables(value: string, env: Record<string, string | undefined>, where: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const found = env[name];
    if (found === undefined) throw new UsageError(`${where} uses \${${name}}, which is not set in the environment`);
    return found;
  });
}

function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(":");
  if (colon <= 0) throw new UsageError(`--header takes 'Name: value', not '${text}'`);
  return [text.slice(0, colon).trim(), text.slice(colon + 1).trim()];
}

/** The environment `assure test` reads: the process's, over the env files' (later files over earlier ones). */
export function readEnvironment(
  files: readonly string[],
  processEnv: Record<string, string | undefined>,
): Record<string, string | undefined> {
  const fromFiles: Record<string, string | undefined> = {};
  for (const file of files) Object.assign(fromFiles, parseEnv(readInputFile(file, "env file").toString("utf8")));
  // A local run keeps its runs in a temporary database (or --db), never in the service's.
  const { ASSURE_DB: _ignored, ...env } = { ...fromFiles, ...processEnv };
  return env;
}

/** The agent's endpoint: the --endpoint file, if any, under what the command line says. */
function readEndpoint(
  values: { [K in "agent" | "protocol" | "model" | "readiness-path" | "endpoint"]?: string | undefined } & {
    header?: string[] | undefined;
  },
  env: Record<string, string | undefined>,
): LocalEndpoint {
  let base: Record<string, unknown> = {};
  if (values.endpoint) {
    const text = readInputFile(values.endpoint, "endpoint file").toString("utf8");
    let parsed: unknown;
    try {
      parsed = parseYaml(text);
    } catch (error) {
      throw new InputError(`endpoint file ${values.endpoint} is not YAML or JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new InputError(`endpoint file ${values.endpoint} must hold an object (an environment's endpoint)`);
    }
    base = parsed as Record<string, unknown>;
  }
  if (values.protocol !== undefined && !EndpointProtocol.safeParse(values.protocol).success) {
    throw new UsageError(`--protocol takes one of ${EndpointProtocol.options.join(", ")}, not '${values.protocol}'`);
  }
  const headers = {
    ...(base.headers as Record<string, string> | undefined),
    ...Object.fromEntries((values.header ?? []).map(parseHeader)),
  };
  const endpoint = {
    ...base,
    protocol: values.protocol ?? base.protocol ?? "openai-chat",
    ...(values.agent !== undefined ? { base_url: values.agent } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...(values["readiness-path"] !== undefined ? { readiness_path: values["readiness-path"] } : {}),
    ...(Object.keys(headers).length > 0
      ? {
          headers: Object.fromEntries(
            Object.entries(headers).map(([name, value]) => [
              name,
              typeof value === "string" ? expandVariables(value, env, `header ${name}`) : value,
            ]),
          ),
        }
      : {}),
  };
  if (endpoint.base_url === undefined) {
    throw new UsageError("Name the agent: --agent URL (e.g. --agent http://localhost:8080/v1)");
  }
  const checked = LocalEndpoint.safeParse(endpoint);
  if (!checked.success) {
    const problems = checked.error.issues.map((issue) => {
      const field = issue.path.join(".");
      const option = {
        base_url: "--agent",
        protocol: "--protocol",
        model: "--model",
        readiness_path: "--readiness-path",
      }[field];
      return `${option ?? (field || "endpoint")}: ${issue.message}`;
    });
    throw new UsageError(`The agent's endpoint is not valid:\n  ${problems.join("\n  ")}`);
  }
  return checked.data;
}

/** `--upload URL` with what goes with it: ASSURE_TOKEN, the service's environment, the commit tested. */
function readUpload(
  values: { [K in "upload" | "environment" | "project" | "repository" | "commit"]?: string | undefined },
  env: Record<string, string | undefined>,
): UploadTarget | undefined {
  if (values.upload === undefined) {
    const stray = (["environment", "project", "repository", "commit"] as const).find((o) => values[o] !== undefined);
    if (stray) throw new UsageError(`--${stray} goes with --upload`);
    return undefined;
  }
  if (!/^https?:\/\/[^\s]+$/.test(values.upload)) {
    throw new UsageError(`--upload takes the service's base URL (http or https), not '${values.upload}'`);
  }
  const token = env.ASSURE_TOKEN;
  if (!token) {
    throw new UsageError("--upload sends the runs as the API key in ASSURE_TOKEN (with runs:execute): set it");
  }
  if (!values.environment) {
    throw new UsageError("--upload needs --environment NAME: the service's environment the runs stand for");
  }
  if ((values.repository === undefined) !== (values.commit === undefined)) {
    throw new UsageError("--repository and --commit go together: the commit the agent under test was built from");
  }
  if (values.commit !== undefined && !/^[0-9a-f]{40}$/.test(values.commit)) {
    throw new UsageError(`--commit takes a full 40-character commit SHA, not '${values.commit}'`);
  }
  return {
    baseUrl: values.upload,
    token,
    environment: values.environment,
    projectId: values.project,
    source: values.repository ? { repository: values.repository, commit_sha: values.commit! } : undefined,
  };
}

/** `assure test`'s command line (and the environment it reads), checked; a UsageError says what is wrong. */
export function readTestOptions(argv: string[], processEnv: Record<string, string | undefined>): TestOptions {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const failOn = values["fail-on"] ?? "blocked";
  if (!(FAIL_ON as readonly string[]).includes(failOn)) {
    throw new UsageError(`--fail-on takes one of ${FAIL_ON.join(", ")}, not '${failOn}'`);
  }
  const env = readEnvironment(values["env-file"] ?? [], processEnv);
  return {
    specs: positionals,
    endpoint: readEndpoint(values, env),
    config: values.config,
    selection: {
      scenarios: values.scenario ?? [],
      repeat: integer("repeat", values.repeat, 1, 1000),
      concurrency: integer("concurrency", values.concurrency, 1, 64),
    },
    env,
    db: values.db,
    json: values.json,
    junit: values.junit,
    open: values.open ?? false,
    port: integer("port", values.port, 0, 65535) ?? 0,
    watch: values.watch ?? false,
    failOn: failOn as FailOn,
    quiet: values.quiet ?? false,
    upload: readUpload(values, env),
  };
}
