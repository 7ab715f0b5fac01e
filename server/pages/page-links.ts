import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { pagePath, type PageKind, type ReleaseDecision, type Run } from "../contract/index.js";

export { PAGE_LINK_SECRET } from "../store/settings.js";

/** A new key for page links: replacing the stored one revokes every link signed before. */
export const newPageLinkSecret = () => randomBytes(32).toString("base64");

export interface PageLinkDeps {
  /** The current key, read each time: a rotation revokes every link at once. */
  secret(): string;
  now(): Date;
  ttlSeconds: number;
}

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
  /** The page's signed path, valid for `ttlSeconds` from now. */
  function mint(kind: PageKind, id: string, projectId: string): string {
    const exp = Math.floor(now().getTime() / 1000) + ttlSeconds;
    return `${pagePath(kind, id)}?exp=${exp}&sig=${sign(secret(), kind, id, projectId, exp)}`;
  }
  return {
    mint,
    /** A run as the API shows it: with `links.html`, minted as it is read. */
    linkRun<R extends Pick<Run, "run_id" | "project_id" | "links">>(run: R): R {
      return { ...run, links: { ...run.links, html: mint("run", run.run_id, run.project_id) } };
    },
    /** A decision as the API shows it: with `links.html`, minted as it is read. */
    linkDecision<D extends Pick<ReleaseDecision, "decision_id" | "project_id" | "links">>(decision: D): D {
      return {
        ...decision,
        links: { ...decision.links, html: mint("decision", decision.decision_id, decision.project_id) },
      };
    },
    /** Whether `exp` and `sig` open this resource's page now: signed for it, with the current key, not expired. */
    verify(kind: PageKind, id: string, projectId: string, exp: string | undefined, sig: string | undefined): boolean {
      if (!exp || !sig || !/^\d{1,12}$/.test(exp)) return false;
      if (Number(exp) * 1000 <= now().getTime()) return false;
      const expected = Buffer.from(sign(secret(), kind, id, projectId, Number(exp)));
      const given = Buffer.from(sig);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export type PageLinks = ReturnType<typeof makePageLinks>;

/**
 * Signed links to the pages of one project's runs and decisions, minted once each: none for
 * another project's (a link is bound to its resource's project).
 */
export function projectPageLinks(
  pages: PageLinks,
  owners: {
    getRun(id: string): { project_id: string } | undefined;
    getDecision(id: string): { project_id: string } | undefined;
  },
  projectId: string,
): (kind: PageKind, id: string) => string | undefined {
  const minted = new Map<string, string | undefined>();
  return (kind, id) => {
    const key = `${kind} ${id}`;
    if (!minted.has(key)) {
      const owner = kind === "run" ? owners.getRun(id)?.project_id : owners.getDecision(id)?.project_id;
      minted.set(key, owner === projectId ? pages.mint(kind, id, projectId) : undefined);
    }
    return minted.get(key);
  };
}
