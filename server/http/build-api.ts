import fastifySwagger from "@fastify/swagger";
import Fastify, { LogController, type FastifyBaseLogger } from "fastify";
import {
  createJsonSchemaTransform,
  createJsonSchemaTransformObject,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { assertScope, makeAuthenticator } from "../auth/authenticate.js";
import { makeKeyUsageRecorder } from "../auth/key-usage.js";
import {
  CreateTestSpecBody,
  DEPRECATIONS,
  OtlpExportTraceServiceRequest,
  type Deprecation,
} from "../contract/index.js";
import { ApiError, coerceError } from "../errors.js";
import { MAX_NESTING, jsonNestingBeyond } from "../specs/nesting.js";
import { formatSpecPath } from "../specs/read-yaml.js";
import { LONE_SURROGATE, loneSurrogateAt } from "../specs/unicode.js";
import { JsonText } from "./json-text.js";
import type { Api, ApiDeps, RouteEntry } from "./context.js";
import { makeErrorHandler } from "./error-response.js";
import { publishedJsonSchema } from "./json-schema.js";
import { deprecationHeaders, finishOpenApiDocument, operationKey, type OpenApiDocument } from "./openapi-document.js";
import { registerAgentRoutes } from "./routes/agents.js";
import { registerEnvironmentRoutes } from "./routes/environments.js";
import { registerAuthRoutes } from "./routes/auth.js";
import { registerMetaRoutes } from "./routes/meta.js";
import { registerProjectRoutes } from "./routes/projects.js";
import { registerRunRoutes } from "./routes/runs.js";
import { registerRunEvidenceRoutes } from "./routes/run-evidence.js";
import { registerReleaseDecisionRoutes } from "./routes/release-decisions.js";
import { registerTestSpecRoutes } from "./routes/test-specs.js";
import { registerPageRoutes } from "./routes/pages.js";
import { registerWebhookRoutes } from "./routes/webhooks.js";
import { registerAuditRoutes } from "./routes/audit-events.js";
import { registerMcpRoutes } from "./routes/mcp.js";
import { registerOtlpRoutes } from "./routes/otlp.js";
import { spend } from "../limits/limits.js";
import { auditWrites } from "./audit-writes.js";

const YAML_TYPES = ["application/yaml", "application/x-yaml", "text/yaml"];

/**
 * Bodies validated where they are read rather than by the route: a spec by the spec reader's
 * thread (validating a 5 MB spec takes long), an OTLP export by its decoder (protobuf or JSON).
 */
const VALIDATED_WHERE_READ = new Set<unknown>([CreateTestSpecBody, OtlpExportTraceServiceRequest]);

/**
 * Response schemas document what we send; they are not enforced at send time (the tests check
 * real responses against the OpenAPI document). How they are published: `publishedJsonSchema`.
 */
const jsonSchemaConfig = { zodToJsonConfig: { override: publishedJsonSchema } };

/**
 * A schema that throws (a bug in a refinement, say) must fail the request with a 500 envelope,
 * not escape Fastify's request pipeline and leave the client hanging.
 *
 * Header schemas document headers in the OpenAPI document; the route that reads a header checks
 * it (e.g. `assertIdempotencyKey`). Validating them with Zod would copy every header of every
 * request, and Fastify would then merge the copy into each later read of `request.headers`: on a
 * replayed `POST /v1/runs` that cost a third of the throughput.
 */
function neverThrowing(compile: typeof validatorCompiler): typeof validatorCompiler {
  return (route) => {
    if (route.httpPart === "headers") return () => true;
    // A spec is validated where it is read, off the event loop (its schema still documents it).
    if (route.httpPart === "body" && VALIDATED_WHERE_READ.has(route.schema)) return (data) => ({ value: data });
    const validate = compile(route);
    return (data) => {
      try {
        return validate(data);
      } catch (raw) {
        return { error: Object.assign(coerceError(raw), { statusCode: 500 }) };
      }
    };
  };
}

/** The /v1 API as a Fastify instance with no server of its own: the host hands it requests. */
export async function buildApi(deps: ApiDeps): Promise<Api> {
  const handleError = makeErrorHandler(deps.log);
  const api = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.bodyLimits.body,
    genReqId: () => deps.newId("request"),
    requestIdHeader: false,
    // Errors Fastify raises before routing (a malformed URL, an over-long id) get the envelope too.
    frameworkErrors: (error, request, reply) => {
      void handleError(error, request, reply);
    },
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  }).withTypeProvider<ZodTypeProvider>();

  api.setValidatorCompiler(neverThrowing(validatorCompiler));
  api.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));
  api.setErrorHandler(handleError);

  api.removeContentTypeParser("text/plain");
  // JSON nested deeper than anything the API takes is refused before it is parsed: parsing, then
  // validating, millions of levels would hold the event loop for seconds (or the stack).
  const parseJson = api.getDefaultJsonParser("error", "error");
  api.removeContentTypeParser("application/json");
  api.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const at = jsonNestingBeyond(body as string, MAX_NESTING);
    if (at !== undefined) {
      return done(
        new ApiError("VALIDATION_FAILED", {
          message: `The body nests deeper than ${MAX_NESTING} levels.`,
          details: [{ path: "body", message: `nested deeper than ${MAX_NESTING} levels (at character ${at})` }],
        }),
        undefined,
      );
    }
    // A spec's body is parsed where it is read, off the event loop: the route gets its text.
    if (VALIDATED_WHERE_READ.has(request.routeOptions.schema?.body)) return done(null, new JsonText(body as string));
    // The default parser answers through `done`: what it returns is nothing to wait for.
    void parseJson(request, body as string, (error, value) => {
      const illFormed = error ? undefined : loneSurrogateAt(value);
      if (!illFormed) return done(error, value);
      done(
        new ApiError("VALIDATION_FAILED", {
          message: "The request does not match the schema; see details.",
          details: [{ path: formatSpecPath(illFormed, "body"), message: `this text ${LONE_SURROGATE}` }],
        }),
        undefined,
      );
    });
  });
  api.addContentTypeParser(YAML_TYPES, { parseAs: "buffer", bodyLimit: deps.bodyLimits.spec }, (_request, body, done) =>
    done(null, body),
  );

  await api.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "assure API",
        version: "1",
        description:
          "Assurance runs against AI agents, their evidence, and release verdicts. Every error is the `Error` envelope with a stable `code`; each operation lists the statuses and codes it answers.",
        contact: { name: "The operators of this assure service" },
        license: { name: "Apache-2.0", identifier: "Apache-2.0" },
      },
      servers: [{ url: deps.publicBaseUrl ?? "/" }],
      components: { securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "assure API key" } } },
      security: [{ apiKey: [] }],
    },
    transform: createJsonSchemaTransform(jsonSchemaConfig),
    transformObject: createJsonSchemaTransformObject(jsonSchemaConfig),
  });

  api.decorateRequest("principal", undefined);
  const authenticate = makeAuthenticator(deps.store, deps.clock);
  const keyUsed = makeKeyUsageRecorder(deps);
  const knownRoutes: { pattern: RegExp; method: string }[] = [];
  const routeTable: RouteEntry[] = [];
  api.decorate("routeTable", routeTable);
  api.decorate("allowedMethods", (path: string) => [
    ...new Set(knownRoutes.filter((route) => route.pattern.test(path)).map((route) => route.method)),
  ]);
  api.addHook("onRoute", (route) => {
    const pattern = new RegExp(`^${route.url.replace(/:[^/]+/g, "[^/]+")}$`);
    for (const method of [route.method].flat()) {
      knownRoutes.push({ pattern, method });
      routeTable.push({
        method,
        url: route.url,
        scope: route.config?.scope,
        operationId: (route.schema as { operationId?: string } | undefined)?.operationId,
        audited: route.config?.audited !== false,
        errors: route.config?.errors ?? [],
        location: route.config?.location === true,
        reads: {
          params: route.schema?.params !== undefined,
          querystring: route.schema?.querystring !== undefined,
          body: route.schema?.body !== undefined,
        },
      });
    }
    auditWrites(route, deps);
  });

  // Filled once the document is: what each operation's responses announce as deprecated.
  let deprecated = new Map<string, Record<string, string>>();

  const { limits } = deps;
  api.addHook("onRequest", async (request, reply) => {
    deps.activity?.requestStarted();
    reply.header("x-request-id", request.id);
    // A request no route takes (404, 405) has no method or url of a route: nothing it uses is deprecated.
    const { method, url } = request.routeOptions;
    if (deprecated.size > 0 && typeof method === "string" && url !== undefined) {
      const headers = deprecated.get(operationKey(method, url));
      if (headers) reply.headers(headers);
    }
    request.principal = undefined;
    const { scope, limit } = request.routeOptions.config;
    // Authenticated first, refused after the budget is counted: a wrong key spends its address's budget.
    let refusal: unknown;
    if (scope) {
      try {
        request.principal = await authenticate(request.headers.authorization);
        keyUsed(request.principal.key_id);
        assertScope(request.principal, scope);
      } catch (error) {
        refusal = error;
      }
    }
    const now = Date.now();
    const spent =
      limit === "public"
        ? await spend(
            limits.public,
            `address:${request.ip}`,
            "requests for pages and health checks from this address",
            now,
          )
        : request.principal
          ? await spend(limits.perKey, `key:${request.principal.key_id}`, "requests with this API key", now)
          : await spend(
              limits.unauthenticated,
              `address:${request.ip}`,
              "requests without a valid API key from this address",
              now,
            );
    if (spent) {
      reply.header("x-ratelimit-limit", spent.limit);
      reply.header("x-ratelimit-remaining", spent.remaining);
      reply.header("x-ratelimit-reset", Math.ceil(now / 1000) + spent.resetSeconds);
    }
    if (refusal) throw coerceError(refusal);
  });

  // A YAML body goes to its route as it came (the spec reader reads it off the event loop).
  api.addHook("preValidation", async (request) => {
    if (Buffer.isBuffer(request.body) && !request.routeOptions.config.acceptsYaml) {
      throw new ApiError("UNSUPPORTED_MEDIA_TYPE", { message: "This endpoint takes application/json." });
    }
  });

  /** A request no route takes: 405 with Allow where the path is served with other methods, else 404. */
  function refuseUnrouted(method: string, url: string): never {
    const path = url.split("?")[0] ?? "";
    const allowed = api.allowedMethods(path);
    if (allowed.length > 0) {
      throw new ApiError("METHOD_NOT_ALLOWED", {
        message: `${method} is not supported here; use ${allowed.join(", ")}.`,
        headers: { allow: allowed.join(", ") },
      });
    }
    throw new ApiError("NOT_FOUND", { message: `No endpoint at ${method} ${path}.` });
  }
  // Refused before Fastify looks at the body: a method it knows and no route takes (QUERY, say) would
  // otherwise be asked for a Content-Type first.
  api.addHook("onRequest", async (request) => {
    if (request.routeOptions.url === undefined) refuseUnrouted(request.method, request.url);
  });
  api.setNotFoundHandler(async (request) => refuseUnrouted(request.method, request.url));

  let openApiDocument = "";
  registerMetaRoutes(
    api,
    () => openApiDocument,
    async () => (await deps.serviceReadiness?.()) ?? [],
  );
  registerProjectRoutes(api, deps);
  registerAgentRoutes(api, deps);
  registerEnvironmentRoutes(api, deps);
  registerAuthRoutes(api, deps);
  registerTestSpecRoutes(api, deps);
  registerRunRoutes(api, deps);
  registerRunEvidenceRoutes(api, deps);
  registerReleaseDecisionRoutes(api, deps);
  registerWebhookRoutes(api, deps);
  registerAuditRoutes(api, deps);
  registerPageRoutes(api, deps);
  registerMcpRoutes(api, deps);
  registerOtlpRoutes(api, deps);

  await api.ready();
  const finished = finishOpenApiDocument(
    api.swagger() as unknown as OpenApiDocument,
    deps.deprecations ?? DEPRECATIONS,
    routeTable,
  );
  openApiDocument = JSON.stringify(finished.document);
  deprecated = new Map(
    [...finished.byOperation].map(([key, list]: [string, Deprecation[]]) => [key, deprecationHeaders(list)]),
  );
  return api;
}
