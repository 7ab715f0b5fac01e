import { z } from "zod";

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string().describe("Stable machine-readable code; see the error table"),
      message: z.string().describe("Human-readable text; do not parse it"),
      retryable: z.boolean(),
      request_id: z.string().describe("Also sent as the X-Request-Id header"),
      details: z
        .array(
          z.object({
            path: z.string(),
            message: z.string(),
            reason: z
              .string()
              .optional()
              .describe("Machine-readable, where callers act on it (e.g. why a sign-in was refused)"),
          }),
        )
        .optional()
        .describe("For VALIDATION_FAILED: every failing field; for a refused sign-in: why"),
    }),
  })
  .meta({ id: "Error" });
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;
