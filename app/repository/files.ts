import type { ProbotOctokit } from "probot";

/**
 * The part of GitHub's REST API that reads a repository: what the App's installation client and
 * the Action's workflow-token client (the same Octokit) both offer.
 */
export interface RepositoryApi {
  rest: {
    repos: Pick<ProbotOctokit["rest"]["repos"], "getContent" | "compareCommitsWithBasehead" | "listCommits">;
    git: Pick<ProbotOctokit["rest"]["git"], "getTree" | "getBlob">;
  };
}

export interface RepositoryRef {
  owner: string;
  repo: string;
}

export const repositoryRef = (fullName: string): RepositoryRef => {
  const [owner, repo] = fullName.split("/") as [string, string];
  return { owner, repo };
};

const status = (error: unknown) => (error as { status?: number }).status;

/** The bytes of a file at a commit, or undefined if the commit has no such file. */
export async function readFileAt(
  octokit: RepositoryApi,
  repository: RepositoryRef,
  sha: string,
  path: string,
): Promise<Buffer | undefined> {
  try {
    const { data } = await octokit.rest.repos.getContent({ ...repository, path, ref: sha });
    if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return undefined;
    // Over 1 MB (a large table) the contents API leaves the content out ("encoding": "none"): read the blob.
    if (data.encoding === "none" || (data.content === "" && data.size > 0)) {
      const blob = await octokit.rest.git.getBlob({ ...repository, file_sha: data.sha });
      return Buffer.from(blob.data.content, "base64");
    }
    return Buffer.from(data.content, "base64");
  } catch (error) {
    if (status(error) === 404) return undefined;
    throw error;
  }
}

/** Every file at a commit (blobs of its tree, recursively), with its size in bytes. */
export async function listFilesAt(
  octokit: RepositoryApi,
  repository: RepositoryRef,
  sha: string,
): Promise<Map<string, number>> {
  const { data } = await octokit.rest.git.getTree({ ...repository, tree_sha: sha, recursive: "1" });
  return new Map(
    data.tree.filter((entry) => entry.type === "blob" && entry.path).map((entry) => [entry.path!, entry.size ?? 0]),
  );
}

/**
 * What the App reads of one commit: a file at most (a spec, a table), and all it reads together. A
 * commit's author chooses its files: larger ones are left unread, and the gate says so.
 */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_COMMIT_BYTES = 64 * 1024 * 1024;

/** A commit's files, read through one ref: its SHA, or a fallback ref that reaches it. */
export interface CommitFiles {
  /** The ref the files are read at. */
  ref: string;
  paths: readonly string[];
  /** Undefined for a file the commit does not have, or one too large to read (`tooLarge` says which). */
  read(path: string): Promise<Buffer | undefined>;
  /** Why a file is not read although the commit has it: over MAX_FILE_BYTES, or past MAX_COMMIT_BYTES in all. */
  tooLarge(path: string): string | undefined;
}

/**
 * Opens a commit to read its files: its tree by SHA, or — for a fork's commit that the base
 * repository does not serve by SHA — by `fallbackRef` (`refs/pull/N/head`). Undefined if neither
 * reaches it.
 */
export async function openCommit(
  octokit: RepositoryApi,
  repository: RepositoryRef,
  sha: string,
  fallbackRef?: string,
): Promise<CommitFiles | undefined> {
  for (const ref of fallbackRef ? [sha, fallbackRef] : [sha]) {
    let sizes: Map<string, number>;
    try {
      sizes = await listFilesAt(octokit, repository, ref);
    } catch (error) {
      if (status(error) === 404) continue;
      throw error;
    }
    // Each file is fetched once: the plan and the policy read the same specs.
    const reads = new Map<string, Promise<Buffer | undefined>>();
    let budget = MAX_COMMIT_BYTES;
    const tooLarge = (path: string): string | undefined => {
      const size = sizes.get(path);
      if (size === undefined || reads.has(path)) return undefined;
      if (size > MAX_FILE_BYTES) return `${path} is ${size} bytes; the App reads files of at most ${MAX_FILE_BYTES}`;
      if (size > budget) return `${path} would take the App past the ${MAX_COMMIT_BYTES} bytes it reads of a commit`;
      return undefined;
    };
    const read = (path: string) => {
      if (!sizes.has(path) || tooLarge(path)) return Promise.resolve(undefined);
      let bytes = reads.get(path);
      if (!bytes) {
        budget -= sizes.get(path)!;
        reads.set(path, (bytes = readFileAt(octokit, repository, ref, path)));
      }
      return bytes;
    };
    return { ref, paths: [...sizes.keys()], read, tooLarge };
  }
  return undefined;
}
