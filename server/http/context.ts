import type { ApiActivity } from "./api-activity.js";
import type { Limits } from "../limits/limits.js";
import type { FastifyInstance, FastifyRequest, RawServerDefault, FastifyBaseLogger } from "fastify";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { Principal } from "../auth/authenticate.js";
import type { Deprecation } from "../contract/index.js";
import type { ErrorCode } from "../errors.js";
import type { Scope } from "../auth/scopes.js";
import type { VerifyOidcToken } from "../auth/github-oidc.js";
import type { Clock } from "../clock.js";
import type { NewId } from "../ids.js";
import type { EgressPolicy } from "../net/egress.js";
import type { McpConversations } from "../engine/mcp-conversations.js";
import type { LiveTraces } from "../engine/traces/live-traces.js";
import type { CheckReadiness } from "../net/readiness.js";
import type { ServiceStore } from "../store/service-store.js";
import type { CursorCodec } from "./cursor.js";
import type { PageLinks } from "../pages/page-links.js";
import type { Logger } from "../log.js";
import type { CommitGate } from "../releases/commit-gate.js";
import type { SpecReader } from "../spec-reader/spec-reader.js";
import type { TraceReader } from "../trace-reader/trace-reader.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; routes without one are public. */
    scope?: Scope;
    /** The route takes an application/yaml body besides JSON. */
    acceptsYaml?: boolean;
    /** Which budget its requests spend: "public" (pages, badges, health) is per address; the API's is per key. */
    limit?: "public";
    /** A route that writes only a run's evidence, through the engine (the MCP server's tool calls, an agent's spans): no audit event. */
    audited?: false;
    /** A route that creates a resource: the property of the written row that holds its id (its audit event's resource). */
    creates?: string;
    /**
     * The error codes this route's own rules answer with, beside those every route of its kind can
     * (authentication, validation, an unknown id in the path, limits): the OpenAPI document lists them.
     */
    errors?: readonly ErrorCode[];
    /** Its successes carry `Location` (what was created, or found). */
    location?: true;
  }
  interface FastifyInstance {
    /** Every route as registered: what the authorization matrix and the property suite walk. */
    routeTable: readonly RouteEntry[];
    /** The methods a path is served with (none: no such path). */
    allowedMethods(path: string): string[];
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

/** Everything a route needs, passed in: no route reaches for a global. */
export interface ApiDeps {
  store: ServiceStore;
  /** Why the service should not be sent traffic now (starting, draining, its writer stopped); empty when ready. */
  serviceReadiness?: (() => Promise<string[]>) | undefined;
  /** The budgets and quotas every door spends from (docs/api.md "Limits"). */
  limits: Limits;
  /** The largest request body in bytes: a test spec's route takes `spec`, every other `body`. */
  bodyLimits: { body: number; spec: number };
  /** Counts the requests the API starts, for background work that yields to it. */
  activity?: ApiActivity | undefined;
  clock: Clock;
  newId: NewId;
  log: Logger;
  checkReadiness: CheckReadiness;
  egress: EgressPolicy;
  cursors: CursorCodec;
  idempotencyWindowMs: number;
  /** The service's public base URL (ASSURE_BASE_URL), named as the server in the OpenAPI document. */
  publicBaseUrl?: string | undefined;
  /** The live conversations whose tools are served over MCP (`/mcp/{token}`). */
  mcp?: McpConversations | undefined;
  /** Tells the run engine that work was enqueued, so it starts at once instead of at its next poll. */
  nudgeEngine: () => void;
  /** What the API announces as deprecated; the contract's DEPRECATIONS unless given. */
  deprecations?: readonly Deprecation[] | undefined;
  /** Verifies workflows' GitHub OIDC tokens; undefined when no audience is configured. */
  verifyOidcToken?: VerifyOidcToken | undefined;
  /** Signs and checks the links that open a run's or a decision's page without an API key. */
  pages: PageLinks;
  /** The GitHub App, when it is configured: it plans the decisions of the repositories it gates. */
  commitGate?: CommitGate | undefined;
  /** The live conversations whose agents' OTLP spans are attached (POST /otlp/v1/traces); none: every span is rejected. */
  liveTraces?: LiveTraces | undefined;
  /** Reads specs on a thread of its own: a large one never holds the event loop. */
  specReader: SpecReader;
  /** Reads OTLP exports on a thread of its own, its queue bounded (POST /otlp/v1/traces). */
  traceReader: TraceReader;
  /** GitHub's web address (github.com or an Enterprise Server's): pages link commits and pull requests there. */
  githubWebUrl?: string | undefined;
}

export interface RouteEntry {
  method: string;
  /** Fastify's form: `/v1/runs/:run_id`. */
  url: string;
  scope: Scope | undefined;
  operationId: string | undefined;
  /** false: its writes are a run's evidence, recorded by the engine, not audit events. */
  audited: boolean;
  /** Its own error codes (`config.errors`). */
  errors: readonly ErrorCode[];
  location: boolean;
  /** Which parts of the request its schema reads. */
  reads: { params: boolean; querystring: boolean; body: boolean };
}

export type Api = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`Route ${request.url} has no scope but asked for the caller`);
  return request.principal;
}
