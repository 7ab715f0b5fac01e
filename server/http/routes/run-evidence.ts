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
import { toConversation, toConversationSummary, toEvaluation, toFinding, toRunEvent, toTurn } from "../../runs/read-models.js";
import type { Run } from "../../contract/index.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { pageAfterKey } from "../paging.js";
import { responses } from "../schemas.js";
import { visibleOr404 } from "../../auth/visibility.js";
import type { FastifyRequest } from "fastify";

const RunParams = z.strictObject({ run_id: ResourceId });
const notFound = (what: string, id: string | number) => new ApiError("NOT_FOUND", { message: `${what} '${id}' was not found.` });

/**
 * A run's evidence, each piece addressable: conversations and their turns, the trace (the
 * run's event log, also served as `events` for consumers that poll), and evaluations.
 */
export function registerRunEvidenceRoutes(api: Api, { store, cursors }: ApiDeps) {
  const visibleRun = (request: FastifyRequest, runId: string): Run =>
    visibleOr404(principalOf(request), store.getRun(runId), "Run", runId);
  const evidence = { config: { scope: "evidence:read" as const } };

  for (const path of ["/v1/runs/:run_id/trace", "/v1/runs/:run_id/events"]) {
    api.get(path, {
      ...evidence,
      schema: {
        operationId: path.endsWith("trace") ? "listTrace" : "listEvents",
        tags: ["evidence"],
        summary: path.endsWith("trace") ? "The run's trace: its events in sequence order" : "The run's events, for consumers that poll",
        description: "Ascending by sequence. Page with `cursor`, or with `after=<sequence>` to continue from a known entry.",
        params: RunParams,
        querystring: TraceQuery,
        response: responses({ 200: RunEventList }),
      },
      handler: async (request) => {
        const run = visibleRun(request, request.params.run_id);
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
      const run = visibleRun(request, request.params.run_id);
      const row = store.getEvent(run.run_id, request.params.sequence);
      if (!row) throw notFound("Trace entry", request.params.sequence);
      return toRunEvent(row);
    },
  });

  api.get("/v1/runs/:run_id/conversations", {
    ...evidence,
    schema: {
      operationId: "listConversations",
      tags: ["evidence"],
      summary: "The run's conversations, in the order they were held",
      params: RunParams,
      querystring: PageQuery,
      response: responses({ 200: ConversationList }),
    },
    handler: async (request) => {
      const run = visibleRun(request, request.params.run_id);
      return pageAfterKey(
        cursors,
        `conversations|${run.run_id}`,
        request.query,
        (after, limit) => store.listRunConversations(run.run_id, after, limit),
        (row) => row.conversation_id,
        toConversationSummary,
      );
    },
  });

  const conversationOf = (request: FastifyRequest, runId: string, conversationId: string) => {
    const run = visibleRun(request, runId);
    const conversation = store.getConversation(conversationId);
    if (!conversation || conversation.run_id !== run.run_id) throw notFound("Conversation", conversationId);
    return conversation;
  };

  api.get("/v1/runs/:run_id/conversations/:conversation_id", {
    ...evidence,
    schema: {
      operationId: "getConversation",
      tags: ["evidence"],
      summary: "A conversation: its messages, each pointing at its trace entry",
      params: z.strictObject({ run_id: ResourceId, conversation_id: ResourceId }),
      response: responses({ 200: Conversation }),
    },
    handler: async (request) => {
      const conversation = conversationOf(request, request.params.run_id, request.params.conversation_id);
      return toConversation(conversation, store.listConversationEvents(conversation.conversation_id));
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
      const conversation = conversationOf(request, request.params.run_id, request.params.conversation_id);
      const events = store.listConversationEvents(conversation.conversation_id, request.params.turn);
      if (events.length === 0) throw notFound("Turn", request.params.turn);
      return toTurn(conversation, request.params.turn, events);
    },
  });

  api.get("/v1/runs/:run_id/evaluations", {
    ...evidence,
    schema: {
      operationId: "listEvaluations",
      tags: ["evidence"],
      summary: "The run's evaluations, in the order they were made",
      params: RunParams,
      querystring: EvaluationQuery,
      response: responses({ 200: EvaluationList }),
    },
    handler: async (request) => {
      const run = visibleRun(request, request.params.run_id);
      const { status, kind, metric_id } = request.query;
      return pageAfterKey(
        cursors,
        `evaluations|${run.run_id}|${status ?? ""}|${kind ?? ""}|${metric_id ?? ""}`,
        request.query,
        (after, limit) => store.listEvaluations(run.run_id, { status, kind, metric_id }, after, limit),
        (row) => row.evaluation_id,
        toEvaluation,
      );
    },
  });

  api.get("/v1/runs/:run_id/evaluations/:evaluation_id", {
    ...evidence,
    schema: {
      operationId: "getEvaluation",
      tags: ["evidence"],
      summary: "One evaluation: score, threshold, status, judge and the evidence it rests on",
      params: z.strictObject({ run_id: ResourceId, evaluation_id: ResourceId }),
      response: responses({ 200: Evaluation }),
    },
    handler: async (request) => {
      const run = visibleRun(request, request.params.run_id);
      const row = store.getEvaluation(run.run_id, request.params.evaluation_id);
      if (!row) throw notFound("Evaluation", request.params.evaluation_id);
      return toEvaluation(row);
    },
  });

  api.get("/v1/runs/:run_id/findings", {
    ...evidence,
    schema: {
      operationId: "listFindings",
      tags: ["evidence"],
      summary: "The run's security findings, in the order they were raised",
      params: RunParams,
      querystring: FindingQuery,
      response: responses({ 200: FindingList }),
    },
    handler: async (request) => {
      const run = visibleRun(request, request.params.run_id);
      const { severity, status } = request.query;
      return pageAfterKey(
        cursors,
        `findings|${run.run_id}|${severity ?? ""}|${status ?? ""}`,
        request.query,
        (after, limit) => store.listFindings(run.run_id, { severity, status }, after, limit),
        (row) => row.finding_id,
        toFinding,
      );
    },
  });

  api.get("/v1/runs/:run_id/findings/:finding_id", {
    ...evidence,
    schema: {
      operationId: "getFinding",
      tags: ["evidence"],
      summary: "One finding: what tripped, its OWASP category and severity, and the trace entries that show it",
      params: z.strictObject({ run_id: ResourceId, finding_id: ResourceId }),
      response: responses({ 200: Finding }),
    },
    handler: async (request) => {
      const run = visibleRun(request, request.params.run_id);
      const row = store.getFinding(run.run_id, request.params.finding_id);
      if (!row) throw notFound("Finding", request.params.finding_id);
      return toFinding(row);
    },
  });
}
