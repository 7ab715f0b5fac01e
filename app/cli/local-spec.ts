import { resolve } from "node:path";
import { versionRow, type ReadVersion } from "../../server/spec-reader/read-spec.js";
import { TestSpecDocument } from "../../server/specs/document.js";
import { loadRepositorySpec, type SpecFileProblem } from "../../server/specs/repository-spec.js";
import { readSpecYaml } from "../../server/specs/read-yaml.js";
import { toSpecVersion } from "../../server/specs/spec-version.js";
import { explainProblem } from "./did-you-mean.js";
import { readInputFile, readRepositoryFile, repositoryPath } from "./project-files.js";

/** A spec file on this disk, read and validated as the App reads one at a commit. */
export interface LocalSpec {
  /** Its repository path (`.assure/specs/a.yaml`), or the path given when it is outside the project. */
  path: string;
  document: TestSpecDocument;
  /** spec_path → line, of the parts evaluations cite. */
  lines: Record<string, number>;
  /** The version to store: `git:<blob SHA>` of the file, as the App would version it, unless it reads tables. */
  version: ReadVersion;
  /** The files it was read from (itself, then its tables), for --watch. */
  files: string[];
}

export type LocalSpecRead = { ok: true; spec: LocalSpec } | { ok: false; problems: SpecFileProblem[] };

/**
 * Reads a spec file under the project's root (the folder of `.assure/`): its YAML, the tables its
 * scenarios name read from the root, the whole validated; or every problem by file and line, an
 * unknown key with the known one it was probably meant to be.
 */
export async function loadLocalSpec(root: string, file: string): Promise<LocalSpecRead> {
  const bytes = readInputFile(file, "spec file");
  const path = repositoryPath(root, file) ?? file;
  const tables: string[] = [];
  const loaded = await loadRepositorySpec(path, bytes, (table) => {
    tables.push(resolve(root, table));
    return readRepositoryFile(root, table);
  });
  if (!loaded.ok) {
    const yaml = readSpecYaml(bytes);
    const lineOf = yaml.ok ? yaml.source.lineOf : undefined;
    return {
      ok: false,
      problems: loaded.problems.map((problem) =>
        problem.file === path ? explainProblem(TestSpecDocument, problem, lineOf) : problem,
      ),
    };
  }
  const { document, text, expanded } = loaded.spec;
  const parts = toSpecVersion(document, text, { fromRepository: true, expanded });
  return {
    ok: true,
    spec: {
      path,
      document,
      lines: parts.lines ?? {},
      version: versionRow(document, parts, { format: "yaml", text: text.text }, null),
      files: [resolve(file), ...tables],
    },
  };
}
