import { z } from "zod";

/** From most to least severe; a finding's `severity_rank` counts up from `info` (0). */
export const SEVERITIES = ["critical", "high", "medium", "low", "info"] as const;
export const Severity = z.enum(SEVERITIES);
export type Severity = z.infer<typeof Severity>;
