import type { FastifyReply } from "fastify";
import { HOME_PAGE } from "../../pages/home-page.js";
import { NOT_FOUND_PAGE } from "../../pages/layout.js";
import { loadDecisionPage, loadRunPage, type PageContext } from "../../pages/load-pages.js";
import { renderDecisionPage } from "../../pages/decision-page.js";
import { renderRunPage } from "../../pages/run-page.js";
import { PAGE_CSS } from "../../pages/styles.js";
import { renderBadge } from "../../pages/badge.js";
import type { Api, ApiDeps } from "../context.js";

/**
 * On every page: nothing runs (no script at all), styles and images come from the service only,
 * no other site may frame it, and the signed link in the address never leaves in a Referer.
 */
export const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "private, no-store",
} as const;

const ID = /^[A-Za-z0-9_-]{1,100}$/;
type PageQuery = { exp?: string; sig?: string; page?: string; find?: string };

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).type("text/html; charset=utf-8").send(html);
}

/**
 * The evidence pages for people, opened by signed links (`links.html`) rather than API keys: a
 * run's, a decision's, and their stylesheet. A tampered, expired or foreign link, and a resource
 * that does not exist, get the same 404 page: a link never tells that a resource exists.
 */
export function registerPageRoutes(api: Api, deps: ApiDeps) {
  const { store, pages } = deps;
  const context: PageContext = {
    store,
    pages,
    githubWebUrl: deps.githubWebUrl ?? "https://github.com",
    now: () => deps.clock.now().toISOString(),
  };
  const hidden = { schema: { hide: true } as object, config: { limit: "public" as const } };
  const signedLink = (path: string, query: PageQuery) =>
    `${path}?exp=${encodeURIComponent(query.exp ?? "")}&sig=${encodeURIComponent(query.sig ?? "")}`;

  api.get("/", hidden, async (_request, reply) => sendPage(reply, 200, HOME_PAGE));
  api.get("/assets/page.css", hidden, async (_request, reply) =>
    reply
      .headers({ "x-content-type-options": "nosniff", "cache-control": "public, max-age=3600" })
      .type("text/css; charset=utf-8")
      .send(PAGE_CSS),
  );

  // A project's public badge: its latest decision on a branch of one of its repositories, to anyone, when it says so.
  api.get<{ Params: { project_id: string; badge: string }; Querystring: { branch?: string } }>(
    "/badges/:project_id/:badge",
    hidden,
    async (request, reply) => {
      const { project_id, badge } = request.params;
      const repositoryId = /^(\d{1,15})\.svg$/.exec(badge)?.[1];
      const branch = request.query.branch ?? "main";
      const project = ID.test(project_id) ? await store.getProject(project_id) : undefined;
      const known =
        project?.public_badge &&
        repositoryId &&
        project.repositories.some((r) => r.github_id === Number(repositoryId)) &&
        /^[\w./-]{1,255}$/.test(branch);
      if (!known) return sendPage(reply, 404, NOT_FOUND_PAGE);
      const status = (await store.latestDecisionOnBranch(project_id, Number(repositoryId), branch)) ?? "none";
      // Fresh each time it is asked for (GitHub's image proxy honours no-cache).
      return reply
        .headers({ ...PAGE_HEADERS, "cache-control": "no-cache, max-age=0" })
        .type("image/svg+xml; charset=utf-8")
        .send(renderBadge(status));
    },
  );

  api.get<{ Params: { run_id: string }; Querystring: PageQuery }>("/runs/:run_id", hidden, async (request, reply) => {
    const { run_id } = request.params;
    const run = ID.test(run_id) ? await store.getRun(run_id) : undefined;
    if (!run || !(await pages.verify("run", run.run_id, run.project_id, request.query.exp, request.query.sig))) {
      return sendPage(reply, 404, NOT_FOUND_PAGE);
    }
    const link = signedLink(`/runs/${run.run_id}`, request.query);
    return sendPage(reply, 200, renderRunPage(await loadRunPage(context, run, link, request.query)));
  });

  api.get<{ Params: { decision_id: string }; Querystring: PageQuery }>(
    "/decisions/:decision_id",
    hidden,
    async (request, reply) => {
      const { decision_id } = request.params;
      const decision = ID.test(decision_id) ? await store.getDecision(decision_id) : undefined;
      if (
        !decision ||
        !(await pages.verify(
          "decision",
          decision.decision_id,
          decision.project_id,
          request.query.exp,
          request.query.sig,
        ))
      ) {
        return sendPage(reply, 404, NOT_FOUND_PAGE);
      }
      const link = signedLink(`/decisions/${decision.decision_id}`, request.query);
      return sendPage(reply, 200, renderDecisionPage(await loadDecisionPage(context, decision, link)));
    },
  );
}
