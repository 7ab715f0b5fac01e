import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PAGE_HEADERS } from "../../../server/http/routes/pages.js";
import { NOT_FOUND_PAGE } from "../../../server/pages/layout.js";
import { renderDecisionPage } from "../../../server/pages/decision-page.js";
import { loadDecisionPage, loadRunPage, type PageContext } from "../../../server/pages/load-pages.js";
import { renderRunPage } from "../../../server/pages/run-page.js";
import { PAGE_CSS } from "../../../server/pages/styles.js";
import type { LocalRunner } from "../../../server/local/local-runner.js";

export interface PageServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  close(): Promise<void>;
}

/**
 * The evidence pages of a local database (a run's, a decision's, their stylesheet) on 127.0.0.1,
 * rendered as the service renders them and opened by the same signed links, so that another user
 * of this machine cannot browse them by guessing.
 */
export async function servePages(
  runner: Pick<LocalRunner, "store" | "pages" | "clock">,
  port = 0,
): Promise<PageServer> {
  const { store, pages, clock } = runner;
  const context: PageContext = {
    store,
    pages,
    githubWebUrl: "https://github.com",
    now: () => clock.now().toISOString(),
  };
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { ...PAGE_HEADERS, "content-type": type }).end(body);
    };
    if (request.method !== "GET") return send(405, "text/plain; charset=utf-8", "Method not allowed");
    if (url.pathname === "/assets/page.css") return send(200, "text/css; charset=utf-8", PAGE_CSS);
    const exp = url.searchParams.get("exp") ?? undefined;
    const sig = url.searchParams.get("sig") ?? undefined;
    const link = `${url.pathname}?exp=${encodeURIComponent(exp ?? "")}&sig=${encodeURIComponent(sig ?? "")}`;
    const page = /^\/(runs|decisions)\/([A-Za-z0-9_-]{1,100})$/.exec(url.pathname);
    try {
      if (page?.[1] === "runs") {
        const run = store.getRun(page[2]!);
        if (run && pages.verify("run", run.run_id, run.project_id, exp, sig)) {
          const query = {
            page: url.searchParams.get("page") ?? undefined,
            find: url.searchParams.get("find") ?? undefined,
          };
          return send(200, "text/html; charset=utf-8", renderRunPage(loadRunPage(context, run, link, query)));
        }
      }
      if (page?.[1] === "decisions") {
        const decision = store.getDecision(page[2]!);
        if (decision && pages.verify("decision", decision.decision_id, decision.project_id, exp, sig)) {
          return send(200, "text/html; charset=utf-8", renderDecisionPage(loadDecisionPage(context, decision, link)));
        }
      }
      send(404, "text/html; charset=utf-8", NOT_FOUND_PAGE);
    } catch (error) {
      send(500, "text/plain; charset=utf-8", `The page could not be rendered: ${(error as Error).message}`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
