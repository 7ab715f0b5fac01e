import type { z } from "zod";
import { ErrorEnvelope } from "../contract/index.js";

/** Every route documents the error envelope beside its success bodies. */
export function responses<T extends Record<number, z.ZodType>>(success: T) {
  return { ...success, "4xx": ErrorEnvelope, "5xx": ErrorEnvelope };
}
