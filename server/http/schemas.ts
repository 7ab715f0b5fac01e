import type { z } from "zod";
import { ErrorEnvelope } from "../contract/index.js";

/**
 * Every route documents the error envelope beside its success bodies: each status it answers is
 * listed when the document is finished (openapi-responses.ts); `4XX` and `5XX` stay as the
 * envelope of any status a later version adds, so generated clients read those too.
 */
export function responses<T extends Record<number, z.ZodType>>(success: T) {
  return { ...success, "4xx": ErrorEnvelope, "5xx": ErrorEnvelope };
}
