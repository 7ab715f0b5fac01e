import { basename, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ASSURE_CONFIG_PATH } from "../../server/contract/index.js";
import type { SpecFileProblem } from "../../server/specs/repository-spec.js";
import { readTable } from "../../server/specs/tables.js";
import { EXIT, InputError, UsageError } from "./exit-codes.js";
import { readLocalConfig, specsOfConfig } from "./local-config.js";
import { loadLocalSpec } from "./local-spec.js";
import { findProjectRoot, readInputFile } from "./project-files.js";
import { configFileOf, formatProblem, specFilesOf } from "./spec-files.js";

/** Checks a config: its schema, the globs that match nothing, and the spec files it names (returned to be checked). */
function checkConfig(root: string, file: string, problems: SpecFileProblem[]): string[] {
  const path = relative(root, resolve(file)) || file;
  const read = readLocalConfig(path, readInputFile(file, "config"));
  if (!read.ok) {
    problems.push(...read.problems);
    return [];
  }
  const { paths, unmatched } = specsOfConfig(root, read.config);
  for (const { entry, spec, glob } of unmatched) {
    problems.push({
      file: path,
      line: read.lineOf(["runs", entry, "specs", spec]) ?? 1,
      path: `runs[${entry}].specs[${spec}]`,
      message: `'${glob}' matches no file`,
    });
  }
  return paths.map((specPath) => join(root, specPath));
}

/** `assure validate`: see VALIDATE_HELP (app/cli/help.ts). */
export async function validateCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { config: { type: "string" } }, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(
      `assure validate: ${(error as Error).message}\nRun 'assure validate --help' for its options.\n`,
    );
    return EXIT.usage;
  }
  const root = findProjectRoot(process.cwd());
  const problems: SpecFileProblem[] = [];
  const names = new Map<string, string>();
  let checked = 0;
  try {
    const given = parsed.positionals;
    const configs = given.filter((file) => basename(file) === "config.yml" || basename(file) === "config.yaml");
    if (parsed.values.config !== undefined) configs.push(parsed.values.config);
    if (given.length === 0 && configs.length === 0) {
      const found = configFileOf(root, undefined);
      try {
        readInputFile(found, "config");
      } catch {
        throw new UsageError(
          `Name the files to check, or run where ${ASSURE_CONFIG_PATH} is (none found from ${process.cwd()} upwards)`,
        );
      }
      configs.push(found);
    }
    const isTable = (file: string) => /\.(csv|jsonl)$/i.test(file);
    for (const table of given.filter(isTable)) {
      const read = readTable(table, readInputFile(table, "table"));
      checked++;
      if (!read.ok) {
        const file = relative(root, resolve(table)) || table;
        problems.push(...read.problems.map((p) => ({ file, line: p.line, path: "(table)", message: p.message })));
      }
    }
    const specs = specFilesOf(given.filter((file) => !configs.includes(file) && !isTable(file)));
    for (const config of configs) {
      specs.push(...checkConfig(root, config, problems));
      checked++;
    }
    for (const file of [...new Set(specs.map((spec) => resolve(spec)))]) {
      const read = await loadLocalSpec(root, file);
      checked++;
      if (!read.ok) {
        problems.push(...read.problems);
        continue;
      }
      const other = names.get(read.spec.document.name);
      if (other) {
        problems.push({
          file: read.spec.path,
          line: 1,
          path: "name",
          message: `'${read.spec.document.name}' is also the name of ${other}: a spec's name must be unique`,
        });
      }
      names.set(read.spec.document.name, read.spec.path);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`assure validate: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof InputError) {
      process.stderr.write(`assure validate: ${error.message}\n`);
      return EXIT.invalidInput;
    }
    throw error;
  }
  for (const problem of problems) process.stdout.write(`${formatProblem(problem, root)}\n`);
  const files = `${checked} file${checked === 1 ? "" : "s"}`;
  process.stderr.write(
    problems.length === 0
      ? `${files} valid\n`
      : `${problems.length} problem${problems.length === 1 ? "" : "s"} in ${files}\n`,
  );
  return problems.length === 0 ? EXIT.allowed : EXIT.blocked;
}
