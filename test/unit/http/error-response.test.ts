import { describe, expect, it } from "@jest/globals";
import Fastify from "fastify";
import { validatorCompiler } from "fastify-type-provider-zod";
import { z } from "zod";
import { ApiError } from "../../../server/errors.js";
import { makeErrorHandler, toApiError, toEnvelope } from "../../../server/http/error-response.js";
import { createLogger } from "../../../server/log.js";
/** The error body a route with this body schema answers `body` with, through Fastify's own validation. */
async function answerTo(schema: z.ZodType, body: unknown) {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(makeErrorHandler(createLogger({ level: "silent" })));
  app.post("/", { schema: { body: schema } }, async () => ({ ok: true }));
  const response = await app.inject({ method: "POST", url: "/", payload: body as object });
  await app.close();
  return { status: response.statusCode, body: response.json() as { error: { code: string; details?: unknown } } };
}

describe("toApiError: everything that goes wrong, as one of the API's codes", () => {
  it("passes an ApiError through as it is", () => {
    const error = new ApiError("ENVIRONMENT_NOT_READY", { message: "down" });
    expect(toApiError(error)).toBe(error);
    expect(toEnvelope(error, "req_1")).toEqual({
      error: { code: "ENVIRONMENT_NOT_READY", message: "down", retryable: true, request_id: "req_1" },
    });
  });

  it("names every failing field of a body, unknown fields included", async () => {
    const schema = z.strictObject({ name: z.string(), limits: z.strictObject({ repeat: z.number() }) });
    const answer = await answerTo(schema, { name: 7, limits: { repeat: 1, extra: true } });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("VALIDATION_FAILED");
    expect(answer.body.error.details).toEqual([
      { path: "body.name", message: expect.any(String) },
      { path: "body.limits.extra", message: "unknown field: extra" },
    ]);
  });

  it.each([
    [
      Object.assign(new Error("too big"), { code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413 }),
      "PAYLOAD_TOO_LARGE",
      413,
    ],
    [
      Object.assign(new Error("bad type"), { code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415 }),
      "UNSUPPORTED_MEDIA_TYPE",
      415,
    ],
    [new SyntaxError("Unexpected token } in JSON"), "MALFORMED_BODY", 400],
    [Object.assign(new Error("teapot"), { statusCode: 418 }), "VALIDATION_FAILED", 400],
    [new TypeError("Cannot read properties of undefined"), "INTERNAL", 500],
    ["a string was thrown", "INTERNAL", 500],
  ])("maps %p to %s (%d)", (raw, code, status) => {
    const error = toApiError(raw);
    expect({ code: error.code, status: error.status }).toEqual({ code, status });
    if (code === "INTERNAL") {
      expect(error.retryable).toBe(true);
      expect(error.message).not.toMatch(/undefined|string was thrown/); // nothing internal leaks into the message
    }
  });
});
