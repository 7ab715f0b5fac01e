import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { pageLocationOf, pagePath, type PageKind, type ReleaseDecision, type Run } from "../contract/index.js";

export { PAGE_LINK_SECRET } from "../store/settings.js";

/** A new key for page links: replacing the stored one revokes every link signed before. */
export const newPageLinkSecret = () => randomBytes(32).toString("base64");

export interface PageLinkDeps {
  /** The current key, read each time: a rotation revokes every link at once. */
  secret(): Promise<string>;
  now(): Date;
  ttlSeconds: number;
}

type LinkedRun = Pick<Run, "run_id" | "project_id" | "links">;
type LinkedDecision = Pick<ReleaseDecision, "decision_id" | "project_id" | "links">;

const sign = (secret: string, kind: PageKind, id: string, projectId: string, exp: number) =>
  createHmac("sha256", Buffer.from(secret, "base64"))
    .update(`assure-page\n${kind}\n${id}\n${projectId}\n${exp}`)
    .digest("base64url");

/** Text with its page links' signatures and expiries taken out: what it says, whenever its links were minted. */
export const withoutLinkSignatures = (text: string) => text.replace(/\?exp=\d+&sig=[\w-]+&?/g, "?");

/**
 * Read-only links to a run's or a decision's page for people without an API key: the page's path
 * with `exp` (Unix seconds) and `sig`, an HMAC-SHA256 bound to that one resource and its project.
 */
export function makePageLinks({ secret, now, ttlSeconds }: PageLinkDeps) {
  /** The page's signed path with `key`, valid for `ttlSeconds` from now. */
  function mintWith(key: string, kind: PageKind, id: string, projectId: string): string {
    const exp = Math.floor(now().getTime() / 1000) + ttlSeconds;
    return `${pagePath(kind, id)}?exp=${exp}&sig=${sign(key, kind, id, projectId, exp)}`;
  }
  const withRunLink = <R extends LinkedRun>(key: string, run: R): R => ({
    ...run,
    links: { ...run.links, html: mintWith(key, "run", run.run_id, run.project_id) },
  });
  const withDecisionLink = <D extends LinkedDecision>(key: string, decision: D): D => ({
    ...decision,
    links: { ...decision.links, html: mintWith(key, "decision", decision.decision_id, decision.project_id) },
  });
  return {
    /** The page's signed path, valid for `ttlSeconds` from now. */
    async mint(kind: PageKind, id: string, projectId: string): Promise<string> {
      return mintWith(await secret(), kind, id, projectId);
    },
    /** A run as the API shows it: with `links.html`, minted as it is read. */
    async linkRun<R extends LinkedRun>(run: R): Promise<R> {
      return withRunLink(await secret(), run);
    },
    /** A page of runs, linked with one read of the key (on PostgreSQL each read is a round trip). */
    async linkRuns<R extends LinkedRun>(runs: R[]): Promise<R[]> {
      const key = await secret();
      return runs.map((run) => withRunLink(key, run));
    },
    /** A decision as the API shows it: with `links.html`, minted as it is read. */
    async linkDecision<D extends LinkedDecision>(decision: D): Promise<D> {
      return withDecisionLink(await secret(), decision);
    },
    /** A page of decisions, linked with one read of the key. */
    async linkDecisions<D extends LinkedDecision>(decisions: D[]): Promise<D[]> {
      const key = await secret();
      return decisions.map((decision) => withDecisionLink(key, decision));
    },
    /** Whether `exp` and `sig` open this resource's page now: signed for it, with the current key, not expired. */
    async verify(
      kind: PageKind,
      id: string,
      projectId: string,
      exp: string | undefined,
      sig: string | undefined,
    ): Promise<boolean> {
      if (!exp || !sig || !/^\d{1,12}$/.test(exp)) return false;
      if (Number(exp) * 1000 <= now().getTime()) return false;
      const expected = Buffer.from(sign(await secret(), kind, id, projectId, Number(exp)));
      const given = Buffer.from(sig);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export type PageLinks = ReturnType<typeof makePageLinks>;

/** The refs to pages' elements within `value`, deeply: the strings its `…_ref` and `…_refs` properties hold. */
export function pageRefsIn(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) pageRefsIn(item, found);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (!/_refs?$/.test(key)) pageRefsIn(item, found);
      else for (const ref of [item].flat()) if (typeof ref === "string" && pageLocationOf(ref)) found.add(ref);
    }
  }
  return found;
}

/**
 * Signed links to the pages that `refs` point to, for one project's runs and decisions, minted
 * once each: none for another project's (a link is bound to its resource's project). The owners
 * are read and the links minted here, so that what is rendered after looks them up without waiting.
 */
export async function projectPageLinks(
  pages: PageLinks,
  owners: {
    getRun(id: string): Promise<{ project_id: string } | undefined>;
    getDecision(id: string): Promise<{ project_id: string } | undefined>;
  },
  projectId: string,
  refs: Iterable<string>,
): Promise<(kind: PageKind, id: string) => string | undefined> {
  const minted = new Map<string, string | undefined>();
  const keyOf = (kind: PageKind, id: string) => `${kind} ${id}`;
  for (const ref of refs) {
    const location = pageLocationOf(ref);
    if (!location || minted.has(keyOf(location.kind, location.id))) continue;
    const { kind, id } = location;
    const owner = kind === "run" ? (await owners.getRun(id))?.project_id : (await owners.getDecision(id))?.project_id;
    minted.set(keyOf(kind, id), owner === projectId ? await pages.mint(kind, id, projectId) : undefined);
  }
  return (kind, id) => minted.get(keyOf(kind, id));
}
