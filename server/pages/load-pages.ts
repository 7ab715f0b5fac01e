import { pageLocationOf, pageUrlOf, runLinks, type Run, type ReleaseDecision } from "../contract/index.js";
import { excerptsWanted, FAILURE_STATUSES, listFailures } from "../releases/report/failures.js";
import { agentExcerpts } from "../runs/agent-excerpt.js";
import { buildEvidence } from "../runs/build-evidence.js";
import { toLoggedEvent } from "../store/index.js";
import type { ServiceStore } from "../store/service-store.js";
import type { DecisionPageData } from "./decision-page.js";
import { pageRefsIn, projectPageLinks, type PageLinks } from "./page-links.js";
import type { RunPageData } from "./run-page.js";

/** `Map.groupBy`, which Node 20 lacks. */
function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(key(item));
    if (list) list.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/** Cases tallied on a run's page, the failing first (the rest are counted). */
export const CASES_SHOWN = 100;

/** Evaluations of each status a decision's page reads per run to name its failures. */
const FAILURE_EVALUATIONS_READ = 10_000;

/** Conversations shown per page of a run. */
export const CONVERSATIONS_PER_PAGE = 100;

export interface PageContext {
  store: ServiceStore;
  pages: PageLinks;
  githubWebUrl: string;
  now: () => string;
}

/**
 * Evidence refs as links a reader can follow: on this page's own signed link, or another page of
 * the same project; none elsewhere. The other pages are those that `refs` point to: the page
 * links them before it is rendered.
 */
async function linker(
  context: PageContext,
  projectId: string,
  self: { kind: "run" | "decision"; id: string; link: string },
  refs: Iterable<string>,
): Promise<(ref: string) => string | undefined> {
  const isSelf = (location: { kind: string; id: string }) => location.kind === self.kind && location.id === self.id;
  const refsToOthers = [...refs].filter((ref) => !isSelf(pageLocationOf(ref)!));
  const others = await projectPageLinks(context.pages, context.store, projectId, refsToOthers);
  const linkOf = (kind: "run" | "decision", id: string) =>
    kind === self.kind && id === self.id ? self.link : others(kind, id);
  return (ref: string) => {
    const location = pageLocationOf(ref);
    const link = location && linkOf(location.kind, location.id);
    return location && link ? pageUrlOf(link, location) : undefined;
  };
}

/** The page of a run's conversations that shows an anchor (`find`), or undefined when any page does. */
async function pageOfAnchor(store: ServiceStore, runId: string, anchor: string): Promise<number | undefined> {
  const conversation = await (async () => {
    const direct = /^(?:conversation-(.+)|turn-(.+)-\d+)$/.exec(anchor);
    if (direct) return direct[1] ?? direct[2];
    const evaluation = /^evaluation-(.+)$/.exec(anchor);
    if (evaluation) return (await store.conversationOf(runId, { evaluation: evaluation[1]! })) ?? undefined;
    const trace = /^trace-(\d+)$/.exec(anchor);
    if (trace) return (await store.conversationOf(runId, { sequence: Number(trace[1]) })) ?? undefined;
    return undefined;
  })();
  const position = conversation === undefined ? undefined : await store.conversationPosition(runId, conversation);
  return position === undefined ? undefined : Math.floor(position / CONVERSATIONS_PER_PAGE) + 1;
}

/** What a run's page shows: `link` is the signed path it was opened with; `page` and `find` choose its conversations. */
export async function loadRunPage(
  context: PageContext,
  run: Run,
  link: string,
  query: { page?: string | undefined; find?: string | undefined },
): Promise<RunPageData> {
  const { store } = context;
  const total = await store.countConversations(run.run_id);
  const pages = Math.max(1, Math.ceil(total / CONVERSATIONS_PER_PAGE));
  const asked = query.find ? await pageOfAnchor(store, run.run_id, query.find) : undefined;
  const page = Math.min(pages, Math.max(1, asked ?? (Number.parseInt(query.page ?? "1", 10) || 1)));
  const conversations = await store.pageConversations(
    run.run_id,
    (page - 1) * CONVERSATIONS_PER_PAGE,
    CONVERSATIONS_PER_PAGE,
  );
  const ids = conversations.map((c) => c.conversation_id);
  const events = groupBy(
    (await store.eventsOfConversations(ids)).map(toLoggedEvent),
    (event) => event.conversation_id!,
  );
  const evaluations = groupBy(await store.evaluationsOfConversations(ids), (evaluation) => evaluation.conversation_id!);
  const specHead = await store.getTestSpecVersion(run.test_spec_id, run.spec_version);
  const environment = await store.getEnvironmentRow(run.environment_id);
  const agent = await store.getAgent(run.agent_id);
  const shown = {
    run,
    evidence: await buildEvidence(store, run),
    spec: {
      name: specHead?.name ?? run.test_spec_id,
      document: await store.getSpecDocument(run.test_spec_id, run.spec_version),
      file: await store.getSpecVersionText(run.test_spec_id, run.spec_version),
    },
    environmentName: environment?.name ?? run.environment_id,
    agent: { name: agent?.name ?? run.agent_id, version: run.agent_version },
    tallies: await store.tallyCases(run.run_id, CASES_SHOWN),
    caseCounts: await store.countCases(run.run_id),
    runWide: await store.listRunWideEvaluations(run.run_id),
    findings: await store.listRunFindings(run.run_id),
    runEvents: (await store.listRunLevelEvents(run.run_id)).map(toLoggedEvent),
    conversations: conversations.map((conversation) => ({
      conversation,
      events: events.get(conversation.conversation_id) ?? [],
      evaluations: evaluations.get(conversation.conversation_id) ?? [],
    })),
    paging: { page, pages, total, hrefOfPage: (n: number) => `${link}&page=${n}` },
    githubWebUrl: context.githubWebUrl,
  };
  const self = { kind: "run", id: run.run_id, link } as const;
  return { ...shown, hrefOf: await linker(context, run.project_id, self, pageRefsIn(shown)) };
}

/** What a decision's page shows. */
export async function loadDecisionPage(
  context: PageContext,
  decision: ReleaseDecision,
  link: string,
): Promise<DecisionPageData> {
  const { store } = context;
  const planned = decision.runs.filter((run) => run.planned);
  const runs: DecisionPageData["runs"] = [];
  for (const run of planned) runs.push(await loadDecisionRun(store, run));
  const shown = {
    decision,
    runs,
    waivers: await store.listWaivers(decision.decision_id, undefined, 500, context.now()),
    approvals: await store.listPolicyApprovals(decision.decision_id),
    githubWebUrl: context.githubWebUrl,
  };
  // Besides the refs it shows, the page links each of its runs (and their evaluations and evidence).
  const refs = [...pageRefsIn(shown), ...runs.map((run) => runLinks(run.run_id).self)];
  const self = { kind: "decision", id: decision.decision_id, link } as const;
  return { ...shown, hrefOf: await linker(context, decision.project_id, self, refs) };
}

/** A planned run as its decision's page shows it: what it tested, where, and its failures. */
async function loadDecisionRun(
  store: ServiceStore,
  run: ReleaseDecision["runs"][number],
): Promise<DecisionPageData["runs"][number]> {
  const spec = (await store.getTestSpec(run.test_spec_id))?.name ?? run.test_spec_id;
  const environment = (await store.getEnvironmentRow(run.environment_id))?.name ?? run.environment_id;
  const full = await store.getRun(run.run_id);
  const source = full && (await store.getSpecVersionSource(full.test_spec_id, full.spec_version));
  const failing = [];
  for (const status of FAILURE_STATUSES) {
    failing.push(...(await store.listEvaluations(run.run_id, { status }, undefined, FAILURE_EVALUATIONS_READ)));
  }
  const failureSource = {
    evaluations: failing.sort((a, b) => (a.evaluation_id < b.evaluation_id ? -1 : 1)),
    document: full && (await store.getSpecDocument(full.test_spec_id, full.spec_version)),
    lines: source?.lines ?? {},
  };
  return {
    run_id: run.run_id,
    label: `${spec} in ${environment}`,
    status: run.status,
    verdict: run.verdict,
    pull_request: full?.source?.pull_request,
    executor: run.executor,
    uploaded_by: run.uploaded_by,
    spec_path: source?.path ?? null,
    failures: listFailures(failureSource, await agentExcerpts(store, excerptsWanted(failureSource))),
  };
}
