import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ACTION = fileURLToPath(new URL("../../action/dist/index.cjs", import.meta.url));

export interface ActionRun {
  status: number | null;
  stdout: string;
  outputs: Record<string, string>;
  summary: string;
  /** The workflow commands it printed (`::error file=…,line=…::message`), parsed. */
  commands: { command: string; properties: Record<string, string>; message: string }[];
}

/** `name<<delimiter\nvalue\ndelimiter` blocks, as @actions/core writes $GITHUB_OUTPUT. */
function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const block = /^(.+?)<<(.+)\n([\s\S]*?)\n\2$/gm;
  for (const match of text.matchAll(block)) outputs[match[1]!] = match[3]!;
  return outputs;
}

function parseCommands(stdout: string): ActionRun["commands"] {
  return [...stdout.matchAll(/^::([a-z-]+)(?: ([^:]*))?::(.*)$/gm)].map((m) => ({
    command: m[1]!,
    properties: Object.fromEntries(
      (m[2] ?? "")
        .split(",")
        .filter(Boolean)
        .map((pair) => pair.split("=", 2) as [string, string])
        .map(([k, v]) => [k, decodeURIComponent(v.replace(/%2C/g, ","))]),
    ),
    message: m[3]!.replace(/%0A/g, "\n").replace(/%25/g, "%"),
  }));
}

/**
 * Runs the committed Action bundle as a runner does: a child process with its inputs as INPUT_*,
 * the workflow's GITHUB_* context (the event payload in a file), and files for outputs and the job
 * summary.
 */
export async function runAction({
  inputs,
  event,
  payload,
  workspace,
  sha,
  ref,
  env = {},
}: {
  inputs: Record<string, string>;
  event: string;
  payload: Record<string, unknown>;
  workspace: string;
  /** GITHUB_SHA: the merge commit on pull_request events. */
  sha: string;
  ref: string;
  env?: Record<string, string>;
}): Promise<ActionRun> {
  const dir = mkdtempSync(join(tmpdir(), "assure-runner-"));
  const files = { event: join(dir, "event.json"), output: join(dir, "output"), summary: join(dir, "summary.md") };
  writeFileSync(files.event, JSON.stringify(payload));
  writeFileSync(files.output, "");
  writeFileSync(files.summary, "");
  const repository = (payload.repository as { full_name: string }).full_name;
  const child = spawn(process.execPath, [ACTION], {
    cwd: workspace,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? dir,
      GITHUB_ACTIONS: "true",
      GITHUB_EVENT_NAME: event,
      GITHUB_EVENT_PATH: files.event,
      GITHUB_SHA: sha,
      GITHUB_REF: ref,
      GITHUB_REPOSITORY: repository,
      GITHUB_WORKSPACE: workspace,
      GITHUB_OUTPUT: files.output,
      GITHUB_STEP_SUMMARY: files.summary,
      GITHUB_RUN_ID: "4242",
      GITHUB_SERVER_URL: "https://github.com",
      GITHUB_API_URL: "https://api.github.com",
      RUNNER_TEMP: dir,
      ...Object.fromEntries(Object.entries(inputs).map(([name, value]) => [`INPUT_${name.toUpperCase()}`, value])),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const status = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    status,
    stdout,
    outputs: parseOutputs(readFileSync(files.output, "utf8")),
    summary: readFileSync(files.summary, "utf8"),
    commands: parseCommands(stdout),
  };
}
