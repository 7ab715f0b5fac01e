import { evidenceLinker } from "../../server/contract/index.js";
import { projectPageLinks, type PageLinks } from "../../server/pages/page-links.js";
import type { ServiceStore } from "../../server/store/service-store.js";
import type { GateView } from "./gate-view.js";

export interface EvidenceLinkDeps {
  store: Pick<ServiceStore, "getRun" | "getDecision">;
  pages: PageLinks;
  /** The service's public base URL: evidence links in check runs are absolute. */
  baseUrl: string;
}

/**
 * Renders what a check run shows with its evidence links absolute: a ref opens the page that shows
 * it (signed, for people without a key) where the decision's project owns that page, else the API
 * path. Links are minted ahead, for the refs the rendering links to: it is rendered again until it
 * links to no ref it was not given a link for (twice, unless the links' length changes what fits).
 */
export async function renderWithEvidenceLinks<T>(
  { store, pages, baseUrl }: EvidenceLinkDeps,
  view: GateView,
  render: (absolute: (ref: string) => string) => T,
): Promise<T> {
  if (view.kind !== "decision") return render((ref) => `${baseUrl}${ref}`);
  const refs = new Set<string>();
  for (;;) {
    const linked = evidenceLinker(baseUrl, await projectPageLinks(pages, store, view.decision.project_id, refs));
    const known = refs.size;
    const rendered = render((ref) => {
      refs.add(ref);
      return linked(ref);
    });
    if (refs.size === known) return rendered;
  }
}
