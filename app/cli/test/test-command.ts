import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { readConfig, type Config } from "../../../server/config.js";
import type { ReleaseDecision, TestSpecSummary } from "../../../server/contract/index.js";
import { AGENT_PROTOCOLS } from "../../../server/engine/agents/index.js";
import { planConversations } from "../../../server/engine/plan.js";
import { ApiError, ConfigError, coerceError } from "../../../server/errors.js";
import { openLocalRunner, type LocalRunner } from "../../../server/local/local-runner.js";
import { createLogger } from "../../../server/log.js";
import { EXIT, InputError, UsageError } from "../exit-codes.js";
import { loadLocalSpec, type LocalSpec } from "../local-spec.js";
import { findProjectRoot } from "../project-files.js";
import { ProblemsError, specFilesToRun } from "../spec-files.js";
import { renderJson } from "./json-output.js";
import { renderJunit } from "./junit.js";
import { startLocalServer, type LocalServer } from "./local-server.js";
import { makeProgress } from "./progress.js";
import { colorStyle, plainStyle, renderDecision, renderRun } from "./render-text.js";
import { readRunResult } from "./run-results.js";
import { selectCases, type Selected } from "./select-cases.js";
import { readTestOptions, type TestOptions } from "./test-options.js";
import { exitCodeOf } from "./exit-code.js";
import { watchFiles } from "./watch.js";
import { uploadRuns } from "./upload.js";

/** A spec to run: the file as read, and what of it runs. */
interface PlannedSpec {
  spec: LocalSpec;
  selected: Extract<Selected, { kind: "selected" }>;
}

/** How often the progress and the decision are looked at while runs go on. */
const POLL_MS = 100;

/** Reads every spec to run and what of it runs; a spec, table, config or selection that will not do stops here. */
async function planSpecs(
  root: string,
  options: TestOptions,
): Promise<{ specs: PlannedSpec[]; files: string[]; notes: string[] }> {
  const { files, configFile, notes } = specFilesToRun(root, options.specs, options.config);
  const specs: PlannedSpec[] = [];
  const problems = [];
  const watched = configFile ? [configFile] : [];
  for (const file of files) {
    const read = await loadLocalSpec(root, file);
    if (!read.ok) {
      problems.push(...read.problems);
      continue;
    }
    watched.push(...read.spec.files);
    const selected = selectCases(read.spec, options.selection);
    if (selected.kind === "invalid") throw new UsageError(`${read.spec.path}: ${selected.message}`);
    if (selected.kind === "none") notes.push(`${read.spec.path}: no scenario or probe matches --scenario; not run`);
    else specs.push({ spec: read.spec, selected });
  }
  if (problems.length > 0) throw new ProblemsError(problems, root);
  if (specs.length === 0) {
    throw new UsageError(`--scenario ${options.selection.scenarios.join(", ")} matches no scenario or probe`);
  }
  return { specs, files: watched, notes };
}

/** Polls until the decision on the runs is made (or Ctrl-C), showing the conversations as they end. */
async function waitForDecision(
  runner: LocalRunner,
  decisionId: string,
  runs: { run_id: string; name: string; planned: number }[],
  options: TestOptions,
  interrupted: () => boolean,
): Promise<ReleaseDecision | undefined> {
  const progress = makeProgress(process.stderr, { quiet: options.quiet });
  try {
    for (;;) {
      const decision = (await runner.store.getDecision(decisionId))!;
      const states = [];
      for (const run of runs) {
        states.push({
          name: run.name,
          planned: run.planned,
          ended: (await runner.store.getRunProgress(run.run_id)).ended,
          status: (await runner.store.getRun(run.run_id))!.status,
        });
      }
      progress.update(states);
      if (decision.status !== "PENDING") return decision;
      if (interrupted()) return undefined;
      await sleep(POLL_MS);
    }
  } finally {
    progress.done();
  }
}

/** One `assure test`: stores the specs, runs them, waits for the decision, prints and writes what came of it. */
async function runOnce(
  runner: LocalRunner,
  environmentId: string,
  specs: PlannedSpec[],
  options: TestOptions,
  pages: LocalServer | undefined,
  interrupted: () => boolean,
): Promise<number> {
  const stored: TestSpecSummary[] = [];
  for (const { selected } of specs) stored.push(await runner.addSpec(selected.version));
  let started;
  try {
    started = await runner.startRuns(stored, environmentId);
  } catch (raw) {
    if (raw instanceof ApiError && raw.code === "ENVIRONMENT_NOT_READY") {
      process.stderr.write(`assure test: the agent is not ready: ${raw.message.replace(/^.*?unavailable: /, "")}\n`);
      return EXIT.error;
    }
    throw raw;
  }
  const decision = await waitForDecision(
    runner,
    started.decision.decision_id,
    started.runs.map((run, i) => ({
      run_id: run.run_id,
      name: stored[i]!.name,
      planned: [...planConversations(specs[i]!.selected.document, { includeProbes: true })].length,
    })),
    options,
    interrupted,
  );
  if (!decision) return EXIT.interrupted;
  const results = [];
  for (const [i, run] of started.runs.entries()) {
    results.push(
      await readRunResult(runner.store, (await runner.store.getRun(run.run_id))!, {
        path: specs[i]!.spec.path,
        document: specs[i]!.selected.document,
        lines: specs[i]!.selected.lines,
        droppedGates: specs[i]!.selected.droppedGates,
      }),
    );
  }
  const exitCode = exitCodeOf(decision, options.failOn);
  const style = process.stdout.isTTY && options.env.NO_COLOR === undefined ? colorStyle : plainStyle;
  const out: string[] = [];
  if (!options.quiet) for (const result of results) out.push(renderRun(result, style), "");
  if (pages) {
    const decisionLink = await runner.pages.mint("decision", decision.decision_id, decision.project_id);
    out.push(`Evidence pages: ${pages.origin}${decisionLink}`);
    for (const result of results) {
      const runLink = await runner.pages.mint("run", result.run.run_id, result.run.project_id);
      out.push(`  ${result.spec.name}: ${pages.origin}${runLink}`);
    }
    out.push("");
  }
  out.push(renderDecision(decision, exitCode, style));
  let uploadRefused = false;
  if (options.upload) {
    const uploaded = await uploadRuns(
      runner.store,
      options.upload,
      results.map((result) => ({ run: result.run, name: result.spec.name })),
    );
    out.push("", `Uploaded to ${options.upload.baseUrl}:`, ...uploaded.lines);
    uploadRefused = uploaded.refused;
  }
  process.stdout.write(`${out.join("\n")}\n`);
  if (options.json) writeFileSync(options.json, await renderJson(runner.store, decision, results));
  if (options.junit) writeFileSync(options.junit, await renderJunit(decision, results));
  return uploadRefused ? EXIT.error : exitCode;
}

function reportError(raw: unknown): number {
  const error = coerceError(raw);
  if (error instanceof UsageError || error instanceof ConfigError) {
    process.stderr.write(`assure test: ${error.message}\nRun 'assure test --help' for its options.\n`);
    return EXIT.usage;
  }
  if (error instanceof ProblemsError) {
    process.stderr.write(`${error.message}\n`);
    return EXIT.invalidInput;
  }
  if (error instanceof InputError) {
    process.stderr.write(`assure test: ${error.message}\n`);
    return EXIT.invalidInput;
  }
  process.stderr.write(`assure test: ${error.stack ?? error.message}\n`);
  return EXIT.error;
}

/** `assure test`: see TEST_HELP (app/cli/help.ts) and docs/cli.md. */
export async function testCommand(argv: string[]): Promise<number> {
  let options: TestOptions;
  let config: Config;
  let plan: Awaited<ReturnType<typeof planSpecs>>;
  const root = findProjectRoot(process.cwd());
  try {
    options = readTestOptions(argv, process.env);
    config = readConfig(options.env);
    // Every spec is read before anything starts: a bad one stops the command here.
    plan = await planSpecs(root, options);
  } catch (raw) {
    return reportError(raw);
  }
  for (const note of plan.notes) process.stderr.write(`${note}\n`);
  let stop = false;
  const onInterrupt = () => {
    if (stop) process.exit(EXIT.interrupted); // a second Ctrl-C does not wait
    stop = true;
  };
  // The pages, and the OTLP receiver and MCP servers of agents that run their own tools, on loopback:
  // listening before the engine starts, which gives agents URLs under it.
  let server: LocalServer;
  try {
    server = await startLocalServer(options.port);
  } catch (raw) {
    return reportError(new UsageError(`--port ${options.port} cannot be used: ${coerceError(raw).message}`));
  }
  let runner: LocalRunner;
  try {
    runner = await openLocalRunner({
      config,
      log: createLogger({ level: options.env.LOG_LEVEL ?? "error", destination: process.stderr }),
      dbPath: options.db,
      baseUrl: server.origin,
    });
  } catch (raw) {
    await server.close();
    const why = coerceError(raw).message;
    return reportError(options.db ? new InputError(`--db ${options.db} cannot be used: ${why}`) : raw);
  }
  server.attach(runner);
  if (AGENT_PROTOCOLS[options.endpoint.protocol].toolsRunBy === "agent" && !options.quiet) {
    process.stderr.write(
      `The agent runs its own tools: export its spans to OTEL_EXPORTER_OTLP_ENDPOINT=${server.otlpEndpoint} (no key needed); {{mcp_url}} is served at ${server.origin}/mcp/…\n`,
    );
  }
  process.on("SIGINT", onInterrupt);
  const pages = options.open ? server : undefined;
  try {
    const environmentId = await runner.useEndpoint(options.endpoint);
    let code = await runOnce(runner, environmentId, plan.specs, options, pages, () => stop);
    if (options.watch && !stop) {
      code = await watchFiles(
        plan.files,
        () => stop,
        async () => {
          const next = await planSpecs(root, options).catch((raw: unknown) => {
            reportError(raw);
            return undefined;
          });
          if (!next) return plan.files;
          plan = next;
          code = await runOnce(runner, environmentId, plan.specs, options, pages, () => stop);
          return plan.files;
        },
      ).then(() => code);
    } else if (pages && !stop) {
      process.stderr.write("Serving the evidence pages until Ctrl-C.\n");
      while (!stop) await sleep(POLL_MS);
    }
    return code;
  } catch (raw) {
    return reportError(raw);
  } finally {
    process.off("SIGINT", onInterrupt);
    await runner.close();
    await server.close();
  }
}
