import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { parseArgs } from "node:util";
import { systemClock } from "../../server/clock.js";
import { ASSURE_CONFIG_PATH, EndpointProtocol } from "../../server/contract/index.js";
import { AGENT_PROTOCOLS } from "../../server/engine/agents/index.js";
import { LocalEndpoint, trimmed } from "../../server/local/local-environment.js";
import { makeEgressPolicy } from "../../server/net/egress.js";
import { makeReadinessProbe } from "../../server/net/readiness.js";
import { EXIT } from "./exit-codes.js";
import { findProjectRoot } from "./project-files.js";

/** The protocols tried, most telling first: an agent card is only A2A's; /models answers for both OpenAI APIs. */
const PROBED: readonly EndpointProtocol[] = ["a2a", "openai-chat", "anthropic-messages"];

export const STARTER_SPEC_PATH = ".assure/specs/smoke.yaml";

const STARTER_CONFIG = `# Which specs gate this repository: docs/spec-reference.md, docs/github-app.md
version: 1
# The assure project whose GitHub App gates this repository's pull requests. Local runs
# (assure test) need none; the App refuses a config without one.
# project: prj_...
runs:
  - specs: [".assure/specs/*.yaml"]
    # The project's environments (deployed agents) the App runs these specs against.
    environments: [staging]
`;

const STARTER_SPEC = `# A first spec, written by assure init: replace its scenario with your agent's own tasks,
# tools and expectations (docs/spec-reference.md). Run it: assure test --agent <URL>
schema_version: "1"
name: smoke
description: The agent answers a greeting, in time, every time.
defaults:
  repeat: 3
scenarios:
  - id: greets
    turns:
      - user: Hello! In one sentence, what can you help me with?
        expect:
          - response:
              matches: "\\\\S"
    expect:
      - latency_ms:
          max: 30000
gates:
  - id: SMOKE
    title: The agent answers every time
    require:
      expectations: all
`;

/** Anthropic's base URL is the origin (its paths start with /v1): a URL given with /v1 is probed without it. */
const baseUrlFor = (protocol: EndpointProtocol, url: string) =>
  protocol === "anthropic-messages" ? trimmed(url).replace(/\/v1$/, "") : trimmed(url);

/** Which protocol the agent answers the readiness probe of, at which base URL; undefined when none does. */
async function probeProtocol(
  endpoint: Omit<LocalEndpoint, "protocol">,
  candidates: readonly EndpointProtocol[],
): Promise<{ protocol: EndpointProtocol | undefined; baseUrl: string; tried: string[] }> {
  const egress = makeEgressPolicy({ thisMachineOpen: true });
  const check = makeReadinessProbe({ egress, clock: systemClock, timeoutMs: 3000 });
  const tried: string[] = [];
  for (const protocol of candidates) {
    const readiness_path = endpoint.readiness_path ?? AGENT_PROTOCOLS[protocol].readinessPath;
    const baseUrl = baseUrlFor(protocol, endpoint.base_url);
    const answer = await check({
      environment_id: `init:${protocol}`,
      protocol,
      base_url: baseUrl,
      model: null,
      readiness_path,
      headers: endpoint.headers ?? {},
      max_concurrency: 1,
      rate_limit_per_minute: null,
      trace_wait_ms: null,
      http: null,
    });
    if (answer.ready) return { protocol, baseUrl, tried };
    tried.push(`${protocol}: ${answer.reason}`);
  }
  return { protocol: undefined, baseUrl: endpoint.base_url, tried };
}

/** `assure init`: see INIT_HELP (app/cli/help.ts). */
export async function initCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        agent: { type: "string" },
        protocol: { type: "string" },
        header: { type: "string", multiple: true },
        "readiness-path": { type: "string" },
        force: { type: "boolean" },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`assure init: ${(error as Error).message}\nRun 'assure init --help' for its options.\n`);
    return EXIT.usage;
  }
  const usage = (message: string) => {
    process.stderr.write(`assure init: ${message}\nRun 'assure init --help' for its options.\n`);
    return EXIT.usage;
  };
  if (!values.agent) return usage("Name the agent: --agent URL (e.g. --agent http://localhost:8080/v1)");
  if (values.protocol !== undefined && !EndpointProtocol.safeParse(values.protocol).success) {
    return usage(`--protocol takes one of ${EndpointProtocol.options.join(", ")}, not '${values.protocol}'`);
  }
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const colon = header.indexOf(":");
    if (colon <= 0) return usage(`--header takes 'Name: value', not '${header}'`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  const endpoint = LocalEndpoint.safeParse({
    protocol: values.protocol ?? "openai-chat",
    base_url: values.agent,
    ...(values["readiness-path"] ? { readiness_path: values["readiness-path"] } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  });
  if (!endpoint.success) return usage(`--agent: ${endpoint.error.issues[0]!.message}`);

  const root = findProjectRoot(process.cwd());
  const files = [
    { path: ASSURE_CONFIG_PATH, text: STARTER_CONFIG },
    { path: STARTER_SPEC_PATH, text: STARTER_SPEC },
  ];
  const existing = files.filter((file) => existsSync(join(root, file.path)));
  if (existing.length > 0 && !values.force) {
    process.stderr.write(
      `assure init: ${existing.map((file) => file.path).join(" and ")} already exist${existing.length === 1 ? "s" : ""} in ${root}; --force writes over them\n`,
    );
    return EXIT.invalidInput;
  }

  const candidates = values.protocol ? [values.protocol as EndpointProtocol] : PROBED;
  const { protocol, baseUrl, tried } = await probeProtocol(endpoint.data, candidates);
  if (!protocol) {
    process.stderr.write(
      `assure init: the agent at ${values.agent} answered no protocol's readiness probe:\n  ${tried.join("\n  ")}\n` +
        "Is it running? For an agent without these endpoints, name --protocol and --readiness-path.\n",
    );
    return EXIT.error;
  }
  for (const file of files) {
    mkdirSync(dirname(join(root, file.path)), { recursive: true });
    writeFileSync(join(root, file.path), file.text);
  }
  const where = (path: string) => relative(process.cwd(), join(root, path)) || path;
  const protocolOption = protocol === "openai-chat" ? "" : ` --protocol ${protocol}`;
  const also =
    protocol === "openai-chat" && !values.protocol
      ? "\n(GET /models answers for Chat Completions and for the Responses API alike: pass --protocol openai-responses if it speaks the latter.)"
      : "";
  process.stdout.write(
    `The agent at ${baseUrl} speaks ${protocol}.${also}\n` +
      `Wrote ${where(ASSURE_CONFIG_PATH)} and ${where(STARTER_SPEC_PATH)}. Next:\n\n` +
      `  npx assure test --agent ${baseUrl}${protocolOption}\n`,
  );
  return EXIT.allowed;
}
