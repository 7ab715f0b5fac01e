/**
 * Where the evidence the API cites is shown to people: each API path an `evidence_refs` entry may
 * hold has a page (a run's or a decision's) and an anchor on it. The pages render exactly these
 * anchors; the App, the Action and the pages themselves link through this one mapping.
 */

export type PageKind = "run" | "decision";

export interface PageLocation {
  kind: PageKind;
  /** The run's or decision's id. */
  id: string;
  /** The element's id on the page; null: the page itself. */
  anchor: string | null;
}

const ID = "[A-Za-z0-9_-]+";
const RULES: { pattern: RegExp; locate(match: RegExpExecArray): PageLocation }[] = [
  {
    pattern: new RegExp(`^/v1/runs/(${ID})/trace/(\\d+)$`),
    locate: (m) => ({ kind: "run", id: m[1]!, anchor: `trace-${m[2]}` }),
  },
  {
    pattern: new RegExp(`^/v1/runs/(${ID})/conversations/(${ID})/turns/(\\d+)$`),
    locate: (m) => ({ kind: "run", id: m[1]!, anchor: `turn-${m[2]}-${m[3]}` }),
  },
  {
    pattern: new RegExp(`^/v1/runs/(${ID})/conversations/(${ID})$`),
    locate: (m) => ({ kind: "run", id: m[1]!, anchor: `conversation-${m[2]}` }),
  },
  {
    pattern: new RegExp(`^/v1/runs/(${ID})/evaluations/(${ID})$`),
    locate: (m) => ({ kind: "run", id: m[1]!, anchor: `evaluation-${m[2]}` }),
  },
  {
    pattern: new RegExp(`^/v1/runs/(${ID})/findings/(${ID})$`),
    locate: (m) => ({ kind: "run", id: m[1]!, anchor: `finding-${m[2]}` }),
  },
  {
    pattern: new RegExp(`^/v1/runs/(${ID})(?:/evidence|/trace|/conversations|/evaluations|/findings)?$`),
    locate: (m) => ({ kind: "run", id: m[1]!, anchor: null }),
  },
  {
    pattern: new RegExp(`^/v1/release-decisions/(${ID})/waivers/(${ID})$`),
    locate: (m) => ({ kind: "decision", id: m[1]!, anchor: `waiver-${m[2]}` }),
  },
  {
    pattern: new RegExp(`^/v1/release-decisions/(${ID})/policy-approvals/(${ID})$`),
    locate: (m) => ({ kind: "decision", id: m[1]!, anchor: `approval-${m[2]}` }),
  },
  {
    pattern: new RegExp(`^/v1/release-decisions/(${ID})(?:/events|/waivers|/policy-approvals)?$`),
    locate: (m) => ({ kind: "decision", id: m[1]!, anchor: null }),
  },
];

/** The page and anchor that show an API path; undefined for a path no page shows. */
export function pageLocationOf(ref: string): PageLocation | undefined {
  const path = ref.split(/[?#]/, 1)[0]!;
  for (const rule of RULES) {
    const match = rule.pattern.exec(path);
    if (match) return rule.locate(match);
  }
  return undefined;
}

/** A page's path: `/runs/{id}` or `/decisions/{id}`. */
export const pagePath = (kind: PageKind, id: string) => `/${kind === "run" ? "runs" : "decisions"}/${id}`;

/**
 * The URL of a located element from its page's signed link (`links.html`): the link, with `find`
 * naming the anchor (a run's page shows the conversations page that holds it), and the anchor.
 */
export function pageUrlOf(signedLink: string, location: PageLocation): string {
  if (location.anchor === null) return signedLink;
  const separator = signedLink.includes("?") ? "&" : "?";
  return `${signedLink}${separator}find=${encodeURIComponent(location.anchor)}#${location.anchor}`;
}

/**
 * Evidence refs as the URLs people follow: where a page shows a ref and a signed link to that page
 * is known (`signedLinkOf`), the page at its element; else the API path. Check runs, job
 * summaries and annotations all link through this.
 */
export function evidenceLinker(
  baseUrl: string,
  signedLinkOf: (kind: PageKind, id: string) => string | undefined,
): (ref: string) => string {
  return (ref) => {
    const location = pageLocationOf(ref);
    const link = location && signedLinkOf(location.kind, location.id);
    return `${baseUrl}${location && link ? pageUrlOf(link, location) : ref}`;
  };
}
