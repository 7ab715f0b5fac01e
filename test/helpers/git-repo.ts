import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A real Git repository in a temporary folder, for what a workflow's checkout holds. */
export function makeGitRepo() {
  const dir = mkdtempSync(join(tmpdir(), "assure-repo-"));
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, GIT_AUTHOR_DATE: "2026-11-23T10:00:00Z", GIT_COMMITTER_DATE: "2026-11-23T10:00:00Z" },
    }).trim();
  git("init", "-q", "-b", "main");
  git("config", "user.email", "ci@example.test");
  git("config", "user.name", "CI");
  git("config", "commit.gpgsign", "false");
  return {
    dir,
    /** Replaces the working tree's files with these, commits them on the current branch, and returns the commit's SHA. */
    commit(files: Record<string, string>, message = "change"): string {
      for (const entry of git("ls-files").split("\n").filter(Boolean)) rmSync(join(dir, entry));
      for (const [path, content] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), content);
      }
      git("add", "-A");
      git("commit", "-q", "--allow-empty", "-m", message);
      return git("rev-parse", "HEAD");
    },
    git,
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
