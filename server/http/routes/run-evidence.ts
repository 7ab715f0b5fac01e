import { z } from "zod";
import {
  Conversation,
  ConversationList,
  Evaluation,
  EvaluationList,
  EvaluationQuery,
  Finding,
  FindingList,
  FindingQuery,
  PageQuery,
  ResourceId,
  RunEvent,
  RunEventList,
  TraceQuery,
  Turn,
} from "../../contract/index.js";
import { ApiError } from "../../errors.js";
import { toConversation, toConversationSummary, toRunEvent, toTurn } from "../../runs/read-models.js";
import type { Api, ApiDeps } from "../context.js";
import { pageAfterKey } from "../paging.js";
import { responses } from "../schemas.js";
import { makeRunLookup, registerRunCollection } from "./run-collection.js";

const RunParams = z.strictObject({ run_id: ResourceId });
const notFound = (what: string, id: string | number) =>
  new ApiError("NOT_FOUND", { message: `${what} '${id}' was not found.` });

/**
 * A run's evidence, each piece addressable: conversations and their turns, the trace (the
 * run's event log, also served as `events` for consumers that poll), and evaluations.
 */
export function registerRunEvidenceRoutes(api: Api, deps: ApiDeps) {
  const { store, cursors } = deps;
  const visibleRun = makeRunLookup(deps);
  const evidence = { config: { scope: "evidence:read" as const } };

  for (const path of ["/v1/runs/:run_id/trace", "/v1/runs/:run_id/events"]) {
    api.get(path, {
      config: { ...evidence.config, errors: ["INVALID_PARAMETER_COMBINATION"] },
      schema: {
        operationId: path.endsWith("trace") ? "listTrace" : "listEvents",
        tags: ["evidence"],
        summary: path.endsWith("trace")
          ? "The run's trace: its events in sequence order"
          : "The run's events, for consumers that poll",
        description:
          "Ascending by sequence. Page with `cursor`, or with `after=<sequence>` to continue from a known entry.",
        params: RunParams,
        querystring: TraceQuery,
        response: responses({ 200: RunEventList }),
      },
      handler: async (request) => {
        const run = await visibleRun(request, request.params.run_id);
        if (request.query.cursor !== undefined && request.query.after !== undefined) {
          throw new ApiError("INVALID_PARAMETER_COMBINATION", {
            message: "Pass either cursor or after, not both.",
            details: [{ path: "query.after", message: "not with cursor" }],
          });
        }
        return pageAfterKey(
          cursors,
          `trace|${run.run_id}`,
          request.query,
          (after, limit) => store.listEvents(run.run_id, Number(after ?? 0), limit),
          (row) => String(row.sequence),
          toRunEvent,
          String(request.query.after ?? 0),
        );
      },
    });
  }

  api.get("/v1/runs/:run_id/trace/:sequence", {
    ...evidence,
    schema: {
      operationId: "getTraceEntry",
      tags: ["evidence"],
      summary: "One trace entry",
      params: z.strictObject({ run_id: ResourceId, sequence: z.coerce.number().int().min(1) }),
      response: responses({ 200: RunEvent }),
    },
    handler: async (request) => {
      const run = await visibleRun(request, request.params.run_id);
      const row = await store.getEvent(run.run_id, request.params.sequence);
      if (!row) throw notFound("Trace entry", request.params.sequence);
      return toRunEvent(row);
    },
  });

  const conversationOf = async (runId: string, conversationId: string) => {
    const conversation = await store.getConversation(conversationId);
    return conversation?.run_id === runId ? conversation : undefined;
  };

  registerRunCollection(api, deps, {
    name: "conversations",
    idParam: "conversation_id",
    what: "Conversation",
    list: {
      operationId: "listConversations",
      summary: "The run's conversations, in the order they were held",
      query: PageQuery,
      response: ConversationList,
      rows: (runId, _query, after, limit) => store.pageRunConversations(runId, after, limit),
      filters: () => [],
      idOf: (row) => row.conversation_id,
      toItem: toConversationSummary,
    },
    get: {
      operationId: "getConversation",
      summary: "A conversation: its messages, each pointing at its trace entry",
      response: Conversation,
      row: conversationOf,
      toItem: async (row) => toConversation(row, await store.listConversationEvents(row.conversation_id)),
    },
  });

  api.get("/v1/runs/:run_id/conversations/:conversation_id/turns/:turn", {
    ...evidence,
    schema: {
      operationId: "getConversationTurn",
      tags: ["evidence"],
      summary: "One user turn of a conversation and everything the agent did in it",
      params: z.strictObject({ run_id: ResourceId, conversation_id: ResourceId, turn: z.coerce.number().int().min(1) }),
      response: responses({ 200: Turn }),
    },
    handler: async (request) => {
      const run = await visibleRun(request, request.params.run_id);
      const conversation = await conversationOf(run.run_id, request.params.conversation_id);
      if (!conversation) throw notFound("Conversation", request.params.conversation_id);
      const events = await store.listConversationEvents(conversation.conversation_id, request.params.turn);
      if (events.length === 0) throw notFound("Turn", request.params.turn);
      return toTurn(conversation, request.params.turn, events);
    },
  });

  registerRunCollection(api, deps, {
    name: "evaluations",
    idParam: "evaluation_id",
    what: "Evaluation",
    list: {
      operationId: "listEvaluations",
      summary: "The run's evaluations, in the order they were made",
      query: EvaluationQuery,
      response: EvaluationList,
      rows: (runId, { status, kind, metric_id }, after, limit) =>
        store.listEvaluations(runId, { status, kind, metric_id }, after, limit),
      filters: ({ status, kind, metric_id }) => [status, kind, metric_id],
      idOf: (row) => row.evaluation_id,
      toItem: (evaluation) => evaluation,
    },
    get: {
      operationId: "getEvaluation",
      summary: "One evaluation: score, threshold, status, judge and the evidence it rests on",
      response: Evaluation,
      row: store.getEvaluation,
      toItem: (evaluation) => evaluation,
    },
  });

  registerRunCollection(api, deps, {
    name: "findings",
    idParam: "finding_id",
    what: "Finding",
    list: {
      operationId: "listFindings",
      summary: "The run's security findings, in the order they were raised",
      query: FindingQuery,
      response: FindingList,
      rows: (runId, { severity, status }, after, limit) =>
        store.listFindings(runId, { severity, status }, after, limit),
      filters: ({ severity, status }) => [severity, status],
      idOf: (row) => row.finding_id,
      toItem: (finding) => finding,
    },
    get: {
      operationId: "getFinding",
      summary: "One finding: what tripped, its OWASP category and severity, and the trace entries that show it",
      response: Finding,
      row: store.getFinding,
      toItem: (finding) => finding,
    },
  });
}
