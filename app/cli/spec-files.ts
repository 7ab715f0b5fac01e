import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { ASSURE_CONFIG_PATH } from "../../server/contract/index.js";
import type { SpecFileProblem } from "../../server/specs/repository-spec.js";
import { InputError, UsageError } from "./exit-codes.js";
import { readLocalConfig, specsOfConfig } from "./local-config.js";
import { readInputFile } from "./project-files.js";

/** Problems found in files, each as `file:line: path: message` (the file as seen from the current folder). */
export class ProblemsError extends Error {
  override name = "ProblemsError";
  constructor(
    readonly problems: readonly SpecFileProblem[],
    root: string,
  ) {
    super(problems.map((problem) => formatProblem(problem, root)).join("\n"));
  }
}

export function formatProblem(problem: SpecFileProblem, root: string): string {
  const file = relative(process.cwd(), resolve(root, problem.file)) || problem.file;
  return `${file}:${problem.line}: ${problem.path}: ${problem.message}`;
}

const isSpecFile = (name: string) => /\.ya?ml$/i.test(name);

/** The spec files named on the command line: a file as it is, a folder as the YAML files in it. */
export function specFilesOf(args: readonly string[]): string[] {
  return args.flatMap((arg) => {
    let isFolder: boolean;
    try {
      isFolder = statSync(arg).isDirectory();
    } catch {
      throw new InputError(`spec file ${arg} does not exist`);
    }
    if (!isFolder) return [arg];
    const found = readdirSync(arg)
      .filter(isSpecFile)
      .sort()
      .map((name) => join(arg, name));
    if (found.length === 0) throw new InputError(`${arg} holds no .yaml or .yml file`);
    return found;
  });
}

/** Where the config is: `--config`, or `.assure/config.yml` under the project's root. */
export const configFileOf = (root: string, given: string | undefined) => given ?? join(root, ASSURE_CONFIG_PATH);

/**
 * The spec files to run: those named, or those the config names (its globs matched under the
 * project's root). A config that is invalid, or names nothing, stops here.
 */
export function specFilesToRun(
  root: string,
  args: readonly string[],
  config: string | undefined,
): { files: string[]; configFile: string | undefined; notes: string[] } {
  if (args.length > 0) return { files: specFilesOf(args), configFile: undefined, notes: [] };
  const configFile = configFileOf(root, config);
  let bytes: Buffer;
  try {
    bytes = readInputFile(configFile, "config");
  } catch (error) {
    if (config !== undefined) throw error;
    throw new UsageError(
      `Name the spec files to run, or run where ${ASSURE_CONFIG_PATH} names them (none found from ${process.cwd()} upwards; assure init writes one)`,
    );
  }
  const read = readLocalConfig(relative(root, resolve(configFile)) || configFile, bytes);
  if (!read.ok) throw new ProblemsError(read.problems, root);
  const { paths, unmatched } = specsOfConfig(root, read.config);
  const notes = unmatched.map((glob) => `${ASSURE_CONFIG_PATH}: '${glob}' matches no file`);
  if (paths.length === 0) {
    throw new InputError(`${configFile} names no spec file that exists (${unmatched.join(", ")})`);
  }
  return { files: paths.map((path) => join(root, path)), configFile, notes };
}
