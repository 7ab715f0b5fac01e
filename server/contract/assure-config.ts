import { z } from "zod";
import { Name, ResourceId } from "./common.js";

export const ASSURE_CONFIG_PATH = ".assure/config.yml";
export const DEFAULT_CHECK_NAME = "assure/release-gate";

const UnderAssure = z
  .string()
  .min(1)
  .max(300)
  .regex(/^\.assure\/(?!.*(^|\/)\.\.(\/|$))[^\0\\]+$/, "a path or glob under .assure/, e.g. .assure/specs/*.yaml");

/**
 * `.assure/config.yml`: which project a repository's commits are gated for, under which check name,
 * and which specs run in which environments. The GitHub App and the Action read the same file.
 */
export const AssureConfig = z
  .strictObject({
    version: z.literal(1),
    project: ResourceId.describe("The project, which must list this repository"),
    check_name: z
      .string()
      .min(1)
      .max(100)
      .default(DEFAULT_CHECK_NAME)
      .describe("The check run's name: keep it stable, branch rulesets require it by name"),
    runs: z
      .array(
        z.strictObject({
          specs: z.array(UnderAssure).min(1).max(50).describe("Spec files: paths or globs under .assure/"),
          environments: z.array(Name).min(1).max(20).describe("Environment names in the project"),
        }),
      )
      .min(1)
      .max(20),
  })
  .meta({ id: "AssureConfig", title: "assure repository configuration (.assure/config.yml)" });
export type AssureConfig = z.infer<typeof AssureConfig>;
