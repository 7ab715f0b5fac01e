import { pageLocationOf, pageUrlOf, type Run, type ReleaseDecision } from "../contract/index.js";
import { excerptsWanted, FAILURE_STATUSES, listFailures } from "../releases/report/failures.js";
import { agentExcerpts } from "../runs/agent-excerpt.js";
import { buildEvidence } from "../runs/build-evidence.js";
import { toLoggedEvent } from "../store/index.js";
import type { ServiceStore } from "../store/service-store.js";
import type { DecisionPageData } from "./decision-page.js";
import { projectPageLinks, type PageLinks } from "./page-links.js";
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

/** Evidence refs as links a reader can follow: on this page's own signed link, or another page of the same project; none elsewhere. */
function linker(context: PageContext, projectId: string, self: { kind: "run" | "decision"; id: string; link: string }) {
  const others = projectPageLinks(context.pages, context.store, projectId);
  const linkOf = (kind: "run" | "decision", id: string) =>
    kind === self.kind && id === self.id ? self.link : others(kind, id);
  return (ref: string) => {
    const location = pageLocationOf(ref);
    const link = location && linkOf(location.kind, location.id);
    return location && link ? pageUrlOf(link, location) : undefined;
  };
}

/** The page of a run's conversations that shows an anchor (`find`), or undefined when any page does. */
function pageOfAnchor(store: ServiceStore, runId: string, anchor: string): number | undefined {
  const conversation = (() => {
    const direct = /^(?:conversation-(.+)|turn-(.+)-\d+)$/.exec(anchor);
    if (direct) return direct[1] ?? direct[2];
    const evaluation = /^evaluation-(.+)$/.exec(anchor);
    if (evaluation) return store.conversationOf(runId, { evaluation: evaluation[1]! }) ?? undefined;
    const trace = /^trace-(\d+)$/.exec(anchor);
    if (trace) return store.conversationOf(runId, { sequence: Number(trace[1]) }) ?? undefined;
    return undefined;
  })();
  const position = conversation === undefined ? undefined : store.conversationPosition(runId, conversation);
  return position === undefined ? undefined : Math.floor(position / CONVERSATIONS_PER_PAGE) + 1;
}

/** What a run's page shows: `link` is the signed path it was opened with; `page` and `find` choose its conversations. */
export function loadRunPage(
  context: PageContext,
  run: Run,
  link: string,
  query: { page?: string | undefined; find?: string | undefined },
): RunPageData {
  const { store } = context;
  const total = store.countConversations(run.run_id);
  const pages = Math.max(1, Math.ceil(total / CONVERSATIONS_PER_PAGE));
  const asked = query.find ? pageOfAnchor(store, run.run_id, query.find) : undefined;
  const page = Math.min(pages, Math.max(1, asked ?? (Number.parseInt(query.page ?? "1", 10) || 1)));
  const conversations = store.pageConversations(
    run.run_id,
    (page - 1) * CONVERSATIONS_PER_PAGE,
    CONVERSATIONS_PER_PAGE,
  );
  const ids = conversations.map((c) => c.conversation_id);
  const events = groupBy(store.eventsOfConversations(ids).map(toLoggedEvent), (event) => event.conversation_id!);
  const evaluations = groupBy(store.evaluationsOfConversations(ids), (evaluation) => evaluation.conversation_id!);
  const specHead = store.getTestSpecVersion(run.test_spec_id, run.spec_version);
  const environment = store.getEnvironmentRow(run.environment_id);
  const agent = store.getAgent(run.agent_id);
  return {
    run,
    evidence: buildEvidence(store, run),
    spec: {
      name: specHead?.name ?? run.test_spec_id,
      document: store.getSpecDocument(run.test_spec_id, run.spec_version),
      file: store.getSpecVersionText(run.test_spec_id, run.spec_version),
    },
    environmentName: environment?.name ?? run.environment_id,
    agent: { name: agent?.name ?? run.agent_id, version: run.agent_version },
    tallies: store.tallyCases(run.run_id, CASES_SHOWN),
    caseCounts: store.countCases(run.run_id),
    runWide: store.listRunWideEvaluations(run.run_id),
    findings: store.listRunFindings(run.run_id),
    runEvents: store.listRunLevelEvents(run.run_id).map(toLoggedEvent),
    conversations: conversations.map((conversation) => ({
      conversation,
      events: events.get(conversation.conversation_id) ?? [],
      evaluations: evaluations.get(conversation.conversation_id) ?? [],
    })),
    paging: { page, pages, total, hrefOfPage: (n) => `${link}&page=${n}` },
    hrefOf: linker(context, run.project_id, { kind: "run", id: run.run_id, link }),
    githubWebUrl: context.githubWebUrl,
  };
}

/** What a decision's page shows. */
export function loadDecisionPage(context: PageContext, decision: ReleaseDecision, link: string): DecisionPageData {
  const { store } = context;
  const planned = decision.runs.filter((run) => run.planned);
  return {
    decision,
    runs: planned.map((run) => {
      const spec = store.getTestSpec(run.test_spec_id)?.name ?? run.test_spec_id;
      const environment = store.getEnvironmentRow(run.environment_id)?.name ?? run.environment_id;
      const full = store.getRun(run.run_id);
      const source = full && store.getSpecVersionSource(full.test_spec_id, full.spec_version);
      const failureSource = {
        evaluations: FAILURE_STATUSES.flatMap((status) =>
          store.listEvaluations(run.run_id, { status }, undefined, FAILURE_EVALUATIONS_READ),
        ).sort((a, b) => (a.evaluation_id < b.evaluation_id ? -1 : 1)),
        document: full && store.getSpecDocument(full.test_spec_id, full.spec_version),
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
        failures: listFailures(failureSource, agentExcerpts(store, excerptsWanted(failureSource))),
      };
    }),
    waivers: store.listWaivers(decision.decision_id, undefined, 500, context.now()),
    approvals: store.listPolicyApprovals(decision.decision_id),
    hrefOf: linker(context, decision.project_id, { kind: "decision", id: decision.decision_id, link }),
    githubWebUrl: context.githubWebUrl,
  };
}
