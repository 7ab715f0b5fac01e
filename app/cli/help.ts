import { readFileSync } from "node:fs";
import { DB_HELP, OPERATOR_HELP } from "./operator-help.js";

export type CommandName = "test" | "validate" | "init" | "keys" | "pages" | "secrets" | "db";

export const MAIN_HELP = `Usage: assure <command> [options]

Test an agent on this machine (no server, no API key):
  test [SPEC...]        Run specs against an agent in this process; print the verdict
  validate [FILE...]    Check specs, their tables and .assure/config.yml, offline
  init --agent URL      Find the protocol an agent speaks; write a starter config and spec

Operate a service (on its database at ASSURE_DB; JSON output):
  keys create|list|revoke
  pages rotate-link-secret
  secrets rotate-key
  db copy --from FILE --to postgres://…

Options:
  -h, --help            Show help (also: assure help <command>, assure <command> --help)
  -v, --version         Show the version

Exit codes: 0 allowed (or done), 1 blocked by a failed gate (or a problem found), 2 inconclusive
or an error, 64 a usage error, 65 an invalid input file. Documentation: docs/cli.md`;

export const TEST_HELP = `Usage: assure test [SPEC...] --agent URL [options]

Runs each spec against the agent with the service's own engine, evaluators and judge, in this
process, on a temporary SQLite database; then prints every case and check, each failure with the
agent's reply and the spec line, the gates and the release decision. Without SPEC, runs the spec
files that .assure/config.yml names (found from the current folder upwards).

The agent:
  --agent URL           Its base URL, e.g. http://localhost:8080/v1 (this machine is allowed)
  --protocol P          openai-chat (default), openai-responses, anthropic-messages, a2a, http
  --model NAME          The model name to send, for agents that want one
  --header 'K: V'       A header for every call (repeatable); \${VAR} is read from the environment
  --readiness-path P    Probed with GET before the run (default: the protocol's, e.g. /models)
  --endpoint FILE       The whole endpoint as YAML or JSON, as POST /v1/environments takes it
                        (needed for protocol http: its request and response mapping)

What runs:
  --config FILE         The config to read instead of .assure/config.yml
  --scenario GLOB       Only scenarios and probes whose id matches (repeatable); gates that
                        then judge nothing are left out
  --repeat N            Play every scenario and probe N times (overrides the spec)
  --concurrency N       Conversations held at once per spec (overrides the spec)
  --env-file FILE       Read variables from FILE (repeatable; the environment wins): the judge
                        (ASSURE_JUDGE_BASE_URL, _MODEL, _API_KEY) and header values
  --db FILE             Keep the runs in this SQLite file instead of a temporary one

Outputs:
  --json FILE           The decision and each run's evidence (GET /v1/runs/{id}/evidence),
                        evaluations and findings
  --junit FILE          JUnit XML: a test case per case and check, and one per gate
  --open                Print the evidence pages' links and serve them until Ctrl-C
  --port N              The port of assure test's server on 127.0.0.1 (default any free one):
                        the evidence pages, and for an agent that runs its own tools the OTLP
                        receiver (OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:N/otlp, no key)
                        and the conversations' MCP servers ({{mcp_url}})
  --watch               Run again whenever a spec, a table or the config changes
  --fail-on WHAT        blocked (default): exit 1 on a failed gate, 2 when only inconclusive;
                        failed: exit 1 on a failed gate, else 0; never: exit 0 once judged
  --quiet               No progress and no table: the decision line only

Sending the runs to the service, to be judged there (it re-evaluates their conversations):
  --upload URL          The service's base URL; the API key is ASSURE_TOKEN (runs:execute,
                        specs:read, environments:read). Each run goes to the service's spec of the
                        same name at the same version: the run is stored as executor: local
  --environment NAME    The service's environment the runs stand for (with --upload)
  --project ID          The project, for a key not bound to one
  --repository O/N      With --commit SHA: the commit the agent under test was built from, so
                        the run can count toward that commit's decision (where policy allows)

Exit codes: 0 allowed, 1 blocked by a failed gate, 2 inconclusive or an error (the agent or the
judge unreachable), 64 a usage error, 65 an invalid spec, table, config or file, 130 interrupted.`;

export const VALIDATE_HELP = `Usage: assure validate [FILE...] [--config FILE]

Checks spec files, the tables they read (vars_file) and .assure/config.yml offline, and prints
each problem as file:line: path: message, with a suggestion for a misspelt key. Without FILE,
checks .assure/config.yml (found from the current folder upwards) and every spec file it names.
A FILE named config.yml (or given with --config) is read as the config, a .csv or .jsonl file as
a table, a folder as the spec files in it, any other file as a spec.

Exit codes: 0 valid, 1 a problem was found, 64 a usage error, 65 a file could not be read.`;

export const INIT_HELP = `Usage: assure init --agent URL [--protocol P] [--header 'K: V']... [--force]

Finds which protocol the agent at URL speaks (each protocol's readiness probe: openai-chat and
openai-responses GET {URL}/models, anthropic-messages GET {URL}/v1/models, a2a its agent card),
then writes .assure/config.yml and .assure/specs/smoke.yaml, a starter spec that
\`assure validate\` accepts and \`assure test --agent URL\` runs. --protocol skips the probing.
Existing files are kept unless --force.

The config names no project: local runs need none. To gate pull requests with the GitHub App,
add \`project: <project_id>\` (the App refuses a config without one, saying so).

Exit codes: 0 written, 2 the agent answered no protocol's probe, 64 a usage error, 65 a file exists.`;

export const COMMAND_HELP: Record<CommandName, string> = {
  test: TEST_HELP,
  validate: VALIDATE_HELP,
  init: INIT_HELP,
  keys: OPERATOR_HELP,
  pages: OPERATOR_HELP,
  secrets: OPERATOR_HELP,
  db: DB_HELP,
};

/** The package's version, from its package.json: two folders up from app/cli/help.ts, and from build/app/cli.js. */
export function packageVersion(): string {
  const location = new URL("../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(location, "utf8")) as { version: string }).version;
}
