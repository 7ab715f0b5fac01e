import { execFileSync } from "node:child_process";

/**
 * The files of a commit, read with git from the workflow's checkout: on pull_request events the
 * checkout is the merge commit, while what is gated (and what the App reads) is the head.
 */
export function openCommitFiles(workspace: string, sha: string) {
  const git = (args: string[]) => execFileSync("git", args, { cwd: workspace, maxBuffer: 64 * 1024 * 1024 });
  try {
    git(["cat-file", "-e", `${sha}^{commit}`]);
  } catch {
    throw new Error(
      `Commit ${sha} is not in the checkout at ${workspace}. Check out the commit to gate: actions/checkout with \`ref: \${{ github.event.pull_request.head.sha }}\` (or fetch-depth: 0).`,
    );
  }
  const paths = git(["ls-tree", "-r", "--name-only", "-z", sha]).toString("utf8").split("\0").filter(Boolean);
  const present = new Set(paths);
  return {
    paths,
    /** The bytes of a file at the commit, or undefined if it has none. */
    read(path: string): Buffer | undefined {
      return present.has(path) ? git(["show", `${sha}:${path}`]) : undefined;
    },
  };
}

export type CommitFiles = ReturnType<typeof openCommitFiles>;
