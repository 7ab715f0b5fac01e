import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ASSURE_CONFIG_PATH } from "../../server/contract/index.js";
import { InputError } from "./exit-codes.js";

/** Files under .assure/ listed at most: the config's globs are matched against them. */
const MAX_LISTED = 10_000;

/**
 * The folder a repository's `.assure/` paths are relative to (the config, its globs, a spec's
 * `vars_file`): the nearest folder, from `start` upwards, that holds `.assure/config.yml`, else
 * one that is a Git work tree's root, else `start` itself.
 */
export function findProjectRoot(start: string): string {
  for (const marker of [ASSURE_CONFIG_PATH, ".git"]) {
    for (let folder = resolve(start); ; folder = dirname(folder)) {
      if (existsSync(join(folder, marker))) return folder;
      if (dirname(folder) === folder) break;
    }
  }
  return resolve(start);
}

/** A path under `root` as the repository writes it (`.assure/specs/a.yaml`); undefined when it is outside. */
export function repositoryPath(root: string, file: string): string | undefined {
  const path = relative(root, resolve(file));
  if (path === "" || path.startsWith("..") || isAbsolute(path)) return undefined;
  return path.split(sep).join("/");
}

/** A file's bytes; an InputError that names it when it cannot be read. */
export function readInputFile(file: string, what = "file"): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as { code?: string }).code;
    const why = code === "ENOENT" ? "does not exist" : code === "EISDIR" ? "is a folder" : (error as Error).message;
    throw new InputError(`${what} ${file} ${why}`, { cause: error });
  }
}

/** Reads a repository path under `root` (a table a spec names): undefined when there is no such file. */
export function readRepositoryFile(root: string, path: string): Buffer | undefined {
  const file = join(root, ...path.split("/"));
  try {
    return statSync(file).isFile() ? readFileSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/** Every file under `root`/.assure, as repository paths, for the config's globs to match. */
export function listAssureFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (folder: string) => {
    let entries;
    try {
      entries = readdirSync(join(root, folder), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (files.length >= MAX_LISTED) return;
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  walk(".assure");
  return files.sort();
}
