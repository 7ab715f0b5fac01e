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
export async function readFileAt(octokit: RepositoryApi, repository: RepositoryRef, sha: string, path: string): Promise<Buffer | undefined> {
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

/** Every file path at a commit (blobs of its tree, recursively). */
export async function listFilesAt(octokit: RepositoryApi, repository: RepositoryRef, sha: string): Promise<string[]> {
  const { data } = await octokit.rest.git.getTree({ ...repository, tree_sha: sha, recursive: "1" });
  return data.tree.filter((entry) => entry.type === "blob" && entry.path).map((entry) => entry.path!);
}

/** A commit's files, read through one ref: its SHA, or a fallback ref that reaches it. */
export interface CommitFiles {
  /** The ref the files are read at. */
  ref: string;
  paths: readonly string[];
  read(path: string): Promise<Buffer | undefined>;
}

/**
 * Opens a commit to read its files: its tree by SHA, or — for a fork's commit that the base
 * repository does not serve by SHA — by `fallbackRef` (`refs/pull/N/head`). Undefined if neither
 * reaches it.
 */
export async function openCommit(octokit: RepositoryApi, repository: RepositoryRef, sha: string, fallbackRef?: string): Promise<CommitFiles | undefined> {
  for (const ref of fallbackRef ? [sha, fallbackRef] : [sha]) {
    let paths: string[];
    try {
      paths = await listFilesAt(octokit, repository, ref);
    } catch (error) {
      if (status(error) === 404) continue;
      throw error;
    }
    const present = new Set(paths);
    // Each file is fetched once: the plan and the policy read the same specs.
    const reads = new Map<string, Promise<Buffer | undefined>>();
    const read = (path: string) => {
      if (!present.has(path)) return Promise.resolve(undefined);
      let bytes = reads.get(path);
      if (!bytes) reads.set(path, (bytes = readFileAt(octokit, repository, ref, path)));
      return bytes;
    };
    return { ref, paths, read };
  }
  return undefined;
}
