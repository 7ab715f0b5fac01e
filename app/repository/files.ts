import type { ProbotOctokit } from "probot";

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
export async function readFileAt(octokit: ProbotOctokit, repository: RepositoryRef, sha: string, path: string): Promise<Buffer | undefined> {
  try {
    const { data } = await octokit.rest.repos.getContent({ ...repository, path, ref: sha });
    if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return undefined;
    return Buffer.from(data.content, "base64");
  } catch (error) {
    if (status(error) === 404) return undefined;
    throw error;
  }
}

/** Every file path at a commit (blobs of its tree, recursively). */
export async function listFilesAt(octokit: ProbotOctokit, repository: RepositoryRef, sha: string): Promise<string[]> {
  const { data } = await octokit.rest.git.getTree({ ...repository, tree_sha: sha, recursive: "1" });
  return data.tree.filter((entry) => entry.type === "blob" && entry.path).map((entry) => entry.path!);
}
