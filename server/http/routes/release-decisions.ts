import type { FastifyRequest } from "fastify";
import { z } from "zod";
import {
  CreateDecisionBody,
  CreatePolicyApprovalBody,
  CreateWaiverBody,
  DecisionEventList,
  DecisionQuery,
  NewAttemptBody,
  PageCursor,
  PageQuery,
  PolicyApproval,
  PolicyApprovalList,
  ReleaseDecision,
  ReleaseDecisionList,
  ResourceId,
  RevokeWaiverBody,
  Waiver,
  WaiverList,
} from "../../contract/index.js";
import { resolveProjectId } from "../../auth/authenticate.js";
import { listProjectFilter, visibleOr404 } from "../../auth/visibility.js";
import { ApiError } from "../../errors.js";
import { requestAttempt, requestDecision } from "../../releases/create-decision.js";
import { approvePolicy, revokeWaiver, waiveGate } from "../../releases/waive.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { pageAfterKey, pageThrough } from "../paging.js";
import { responses } from "../schemas.js";

const DecisionParams = z.strictObject({ decision_id: ResourceId });
const WaiverParams = z.strictObject({ decision_id: ResourceId, waiver_id: ResourceId });
const tags = ["release-decisions"];

/**
 * Release decisions: ALLOWED or BLOCKED (PENDING meanwhile) for a commit or a set of runs, with
 * every reason cited, the events of its changes, and the waivers that lift its gates.
 */
export function registerReleaseDecisionRoutes(api: Api, deps: ApiDeps) {
  const { store, clock, cursors } = deps;
  const visibleDecision = async (request: FastifyRequest, decisionId: string) =>
    visibleOr404(principalOf(request), await store.getDecision(decisionId), "Release decision", decisionId);
  const author = (request: FastifyRequest) => ({ key_id: principalOf(request).key_id, github_login: null });

  api.post("/v1/release-decisions", {
    config: {
      scope: "releases:write",
      creates: "decision_id",
      location: true,
      errors: [
        "PROJECT_ID_REQUIRED",
        "NOT_FOUND",
        "FORBIDDEN",
        "PLANNED_BY_APP",
        "COMMIT_NOT_GATED",
        "GITHUB_UNAVAILABLE",
      ],
    },
    schema: {
      operationId: "createReleaseDecision",
      tags,
      summary:
        "Make the release decision of a commit (or find it: one per project, repository and commit), or of a set of runs",
      description:
        "For a repository the GitHub App gates, the App plans the commit's decision from what GitHub says: send the subject alone (a plan or base is refused with PLANNED_BY_APP). Elsewhere the client names the plan and base (planned_by: client).",
      body: CreateDecisionBody,
      response: responses({ 200: ReleaseDecision, 201: ReleaseDecision }),
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const projectId = resolveProjectId(principal, request.body.project_id);
      visibleOr404(principal, await store.getProject(projectId), "Project", projectId);
      const { decision, created } = await requestDecision(deps, principal, projectId, request.body);
      return reply
        .code(created ? 201 : 200)
        .header("location", decision.links.self)
        .send(await deps.pages.linkDecision(decision));
    },
  });

  api.get("/v1/release-decisions", {
    config: { scope: "releases:read", errors: ["NOT_FOUND"] },
    schema: {
      operationId: "listReleaseDecisions",
      tags,
      summary: "List release decisions, newest first",
      querystring: DecisionQuery,
      response: responses({ 200: ReleaseDecisionList }),
    },
    handler: async (request) => {
      const { repository, commit_sha, status } = request.query;
      const project_id = listProjectFilter(principalOf(request), request.query.project_id);
      const scope = ["release-decisions", project_id, repository, commit_sha, status].map((v) => v ?? "").join("|");
      const page = await pageThrough(cursors, scope, request.query, (page) =>
        store.listDecisions({ project_id, repository, commit_sha, status }, page),
      );
      return { ...page, data: await deps.pages.linkDecisions(page.data) };
    },
  });

  api.get("/v1/release-decisions/:decision_id", {
    config: { scope: "releases:read" },
    schema: {
      operationId: "getReleaseDecision",
      tags,
      summary: "Get a release decision",
      params: DecisionParams,
      response: responses({ 200: ReleaseDecision }),
    },
    handler: async (request) => deps.pages.linkDecision(await visibleDecision(request, request.params.decision_id)),
  });

  api.post("/v1/release-decisions/:decision_id/attempts", {
    config: {
      scope: "releases:write",
      errors: ["CONFLICT", "FORBIDDEN", "PLANNED_BY_APP", "COMMIT_NOT_GATED", "GITHUB_UNAVAILABLE"],
    },
    schema: {
      operationId: "startReleaseDecisionAttempt",
      tags,
      summary: "Start a commit's runs again: a new attempt, which waits for new runs",
      params: DecisionParams,
      body: NewAttemptBody,
      response: responses({ 201: ReleaseDecision }),
    },
    handler: async (request, reply) => {
      const decision = await visibleDecision(request, request.params.decision_id);
      return reply
        .code(201)
        .send(
          await deps.pages.linkDecision(await requestAttempt(deps, principalOf(request), decision, request.body.plan)),
        );
    },
  });

  api.get("/v1/release-decisions/:decision_id/events", {
    config: { scope: "releases:read" },
    schema: {
      operationId: "listReleaseDecisionEvents",
      tags,
      summary: "The changes of a decision, in order (release_decision.updated)",
      params: DecisionParams,
      querystring: PageQuery.extend({
        after: z.coerce.number().int().min(0).optional().describe("Entries with a sequence greater than this"),
      }),
      response: responses({ 200: DecisionEventList }),
    },
    handler: async (request) => {
      const decision = await visibleDecision(request, request.params.decision_id);
      return pageAfterKey(
        cursors,
        `decision-events|${decision.decision_id}`,
        request.query,
        (after, limit) => store.listDecisionEvents(decision.decision_id, Number(after ?? 0), limit),
        (event) => String(event.sequence),
        (event) => event,
        String(request.query.after ?? 0),
      );
    },
  });

  api.post("/v1/release-decisions/:decision_id/waivers", {
    config: { scope: "releases:waive", creates: "waiver_id", location: true, errors: ["NOT_WAIVABLE"] },
    schema: {
      operationId: "createWaiver",
      tags,
      summary: "Waive a gate of one of the decision's runs, for a reason (releases:waive)",
      params: DecisionParams,
      body: CreateWaiverBody,
      response: responses({ 201: Waiver }),
    },
    handler: async (request, reply) => {
      const decision = await visibleDecision(request, request.params.decision_id);
      const waiver = await waiveGate(deps, decision, request.body, author(request));
      return reply.code(201).header("location", `${decision.links.waivers}/${waiver.waiver_id}`).send(waiver);
    },
  });

  api.post("/v1/release-decisions/:decision_id/policy-approvals", {
    config: { scope: "releases:waive", creates: "approval_id", errors: ["NOTHING_TO_APPROVE", "CONFLICT"] },
    schema: {
      operationId: "approvePolicyChanges",
      tags,
      summary:
        "Approve what the head removes or relaxes in the base branch's .assure/: lifts the decision's gate 'policy' (releases:waive)",
      params: DecisionParams,
      body: CreatePolicyApprovalBody,
      response: responses({ 201: PolicyApproval }),
    },
    handler: async (request, reply) => {
      const decision = await visibleDecision(request, request.params.decision_id);
      return reply.code(201).send(await approvePolicy(deps, decision, request.body.reason, author(request)));
    },
  });

  api.get("/v1/release-decisions/:decision_id/policy-approvals", {
    config: { scope: "releases:read" },
    schema: {
      operationId: "listPolicyApprovals",
      tags,
      summary: "Who approved the head's policy changes, and why",
      params: DecisionParams,
      response: responses({ 200: PolicyApprovalList }),
    },
    handler: async (request) => {
      const decision = await visibleDecision(request, request.params.decision_id);
      return { data: await store.listPolicyApprovals(decision.decision_id), next_cursor: null, has_more: false };
    },
  });

  api.get("/v1/release-decisions/:decision_id/policy-approvals/:approval_id", {
    config: { scope: "releases:read" },
    schema: {
      operationId: "getPolicyApproval",
      tags,
      summary: "Get an approval of the head's policy changes",
      params: z.strictObject({ decision_id: ResourceId, approval_id: ResourceId }),
      response: responses({ 200: PolicyApproval }),
    },
    handler: async (request) => {
      const decision = await visibleDecision(request, request.params.decision_id);
      const approval = await store.getPolicyApproval(decision.decision_id, request.params.approval_id);
      if (!approval) {
        throw new ApiError("NOT_FOUND", { message: `Policy approval '${request.params.approval_id}' not found.` });
      }
      return approval;
    },
  });

  api.get("/v1/release-decisions/:decision_id/waivers", {
    config: { scope: "releases:read" },
    schema: {
      operationId: "listWaivers",
      tags,
      summary: "The decision's waivers and revocations, in the order they were made",
      params: DecisionParams,
      querystring: z.strictObject({ limit: PageQuery.shape.limit, cursor: PageCursor.optional() }),
      response: responses({ 200: WaiverList }),
    },
    handler: async (request) => {
      const decision = await visibleDecision(request, request.params.decision_id);
      const now = clock.now().toISOString();
      return pageAfterKey(
        cursors,
        `waivers|${decision.decision_id}`,
        request.query,
        (after, limit) => store.listWaivers(decision.decision_id, after, limit, now),
        (waiver) => waiver.waiver_id,
        (waiver) => waiver,
      );
    },
  });

  const visibleWaiver = async (request: FastifyRequest, decisionId: string, waiverId: string) => {
    const decision = await visibleDecision(request, decisionId);
    const waiver = await store.getWaiver(decision.decision_id, waiverId, clock.now().toISOString());
    if (!waiver) throw new ApiError("NOT_FOUND", { message: `Waiver '${waiverId}' was not found.` });
    return waiver;
  };

  api.get("/v1/release-decisions/:decision_id/waivers/:waiver_id", {
    config: { scope: "releases:read" },
    schema: {
      operationId: "getWaiver",
      tags,
      summary: "Get a waiver (or a revocation)",
      params: WaiverParams,
      response: responses({ 200: Waiver }),
    },
    handler: async (request) => visibleWaiver(request, request.params.decision_id, request.params.waiver_id),
  });

  api.post("/v1/release-decisions/:decision_id/waivers/:waiver_id/revocations", {
    config: { scope: "releases:waive", creates: "waiver_id", errors: ["CONFLICT"] },
    schema: {
      operationId: "revokeWaiver",
      tags,
      summary: "Take a waiver back, with a reason: a record of its own (releases:waive)",
      params: WaiverParams,
      body: RevokeWaiverBody,
      response: responses({ 201: Waiver }),
    },
    handler: async (request, reply) => {
      const waiver = await visibleWaiver(request, request.params.decision_id, request.params.waiver_id);
      return reply.code(201).send(await revokeWaiver(deps, waiver, request.body.reason, author(request)));
    },
  });
}
