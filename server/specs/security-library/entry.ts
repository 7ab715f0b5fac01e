import { z } from "zod";
import { LocalId, Text, ToolName } from "../primitives.js";
import { Severity } from "../severity.js";
import { FAMILY_NAMES } from "./families/index.js";
import { PRESET_NAMES } from "./presets.js";
import { STRATEGY_NAMES } from "./strategies/index.js";

const StrategyName = z.enum(STRATEGY_NAMES);

/** A strategy, or a combination applied in order; the language switch, which rewrites the attack, comes first. */
const StrategyItem = z.union([
  StrategyName,
  z
    .array(StrategyName)
    .min(1)
    .max(4)
    .refine((names) => !names.slice(1).includes("language-switch"), {
      message: "language-switch rewrites the attack: put it first in a combination",
    }),
]);

/** `- preset: <name>` or `- family: <name>` in `security:`: expanded at upload into concrete probes. */
export const LibraryEntry = z
  .strictObject({
    preset: z.enum(PRESET_NAMES).optional().describe("A preset of the security library"),
    family: z.enum(FAMILY_NAMES).optional().describe("One family of the security library"),
    tools: z
      .array(ToolName)
      .min(1)
      .max(128)
      .optional()
      .describe("The tools its probes aim at (by default every tool of the spec)"),
    severity: Severity.optional().describe("The severity of every probe it makes (by default each family's own)"),
    repeat: z.number().int().min(1).max(1000).optional().describe("Times each of its probes runs"),
    strategies: z
      .array(StrategyItem)
      .max(20)
      .optional()
      .describe(
        "Each probe is also sent with each of these (a list is a combination, applied in order); for a preset, replaces its own",
      ),
    seed: z
      .number()
      .int()
      .min(0)
      .max(4_294_967_295)
      .optional()
      .describe("Makes the expansion reproducible; by default derived from the spec's name"),
    system: Text.optional().describe("The system prompt of its probes; by default the first scenario's"),
    id_prefix: LocalId.optional().describe("Put before its probes' ids: to tell apart two entries of the same family"),
  })
  .refine((entry) => (entry.preset === undefined) !== (entry.family === undefined), {
    message: "name a preset or a family, one of them",
  })
  .meta({
    id: "SecurityLibraryEntry",
    oneOf: [
      { required: ["preset"], properties: { preset: {}, family: false } },
      { required: ["family"], properties: { family: {}, preset: false } },
    ],
  });
export type LibraryEntry = z.infer<typeof LibraryEntry>;

/** An item of `security:` that the library expands, rather than a probe. */
export const isLibraryEntry = (item: unknown): item is LibraryEntry =>
  item !== null && typeof item === "object" && ("preset" in item || "family" in item);

/** Whether a document as written (not yet validated) has library entries in `security:`. */
export const writesLibraryEntries = (document: unknown): boolean => {
  const security = (document as { security?: unknown } | null)?.security;
  return Array.isArray(security) && security.some(isLibraryEntry);
};

/** What a library entry probed, and what it could not, as data: written by the expansion. */
export const SecurityCoverage = z
  .array(
    z.strictObject({
      entry: z.string().max(200).describe("preset:<name> or family:<name>"),
      seed: z.number().int().min(0).max(4_294_967_295),
      probes: z.number().int().min(0),
      categories: z
        .array(
          z.strictObject({
            id: z.string().max(20).describe("LLM01…LLM10, or ASI01…ASI10"),
            probes: z.number().int().min(0),
            not_testable: z.string().max(1000).optional().describe("Why no probe can test it from outside the agent"),
          }),
        )
        .max(50),
      skipped: z
        .array(
          z.strictObject({
            family: z.string().max(100),
            reason: z.string().max(1000),
            probes: z.number().int().min(0).optional().describe("How many probes it left out, when it counted them"),
          }),
        )
        .max(500),
    }),
  )
  .max(500)
  .describe(
    "Written at upload by the security library: per library entry of security, the categories probed and how many probes, and what it could not generate and why",
  );
export type SecurityCoverage = z.infer<typeof SecurityCoverage>;
