import type { BaseCommit } from "../../server/changes/baseline.js";
import type { RepositoryApi, RepositoryRef } from "./files.js";

const PER_PAGE = 100;
/** Enough pages for `depth` first parents even where every other commit is a merge's second parent. */
const MAX_PAGES = 5;

/**
 * The base branch's first-parent chain from the merge base of `baseSha` and `headSha` back, newest
 * first, at most `depth` commits: where a pull request's baseline is looked for. The commits API
 * lists every ancestor (merged branches too), so the chain is followed through `parents[0]`.
 * Undefined when GitHub does not know a merge base.
 */
export async function baseBranchChain(
  octokit: RepositoryApi,
  repository: RepositoryRef,
  baseSha: string,
  headSha: string,
  depth: number,
): Promise<BaseCommit[] | undefined> {
  let mergeBase: string;
  try {
    const { data } = await octokit.rest.repos.compareCommitsWithBasehead({
      ...repository,
      basehead: `${baseSha}...${headSha}`,
      per_page: 1,
    });
    mergeBase = data.merge_base_commit.sha;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return undefined;
    throw error;
  }
  const known = new Map<string, { committed_at: string; parent: string | undefined }>();
  const chain: BaseCommit[] = [];
  let next: string | undefined = mergeBase;
  for (let page = 1; next && chain.length < depth;) {
    const commit = known.get(next);
    if (commit) {
      chain.push({ sha: next, committed_at: commit.committed_at });
      next = commit.parent;
      continue;
    }
    if (page > MAX_PAGES) break;
    const { data } = await octokit.rest.repos.listCommits({
      ...repository,
      sha: mergeBase,
      per_page: PER_PAGE,
      page: page++,
    });
    for (const item of data) {
      known.set(item.sha, {
        committed_at: item.commit.committer?.date ?? item.commit.author?.date ?? new Date(0).toISOString(),
        parent: item.parents[0]?.sha,
      });
    }
    if (data.length < PER_PAGE && !known.has(next)) break; // the history ends before it
  }
  return chain;
}
