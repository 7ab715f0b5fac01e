import { z } from "zod";
import { ChangeSettings } from "./changes.js";
import { Name, ResourceId } from "./common.js";
import { parseDuration } from "./duration.js";

export const ASSURE_CONFIG_PATH = ".assure/config.yml";
export const DEFAULT_CHECK_NAME = "assure/release-gate";

const UnderAssure = z
  .string()
  .min(1)
  .max(300)
  .regex(/^\.assure\/(?!.*(^|\/)\.\.(\/|$))[^\0\\]+$/, "a path or glob under .assure/, e.g. .assure/specs/*.yaml");

/** `90s`, `30m`, `2h`, at most a day, in milliseconds. */
const Duration = z
  .string()
  .regex(/^[1-9]\d{0,6}(s|m|h)$/, "a duration such as 90s, 30m or 2h")
  .transform((text) => parseDuration(text, ["s", "m", "h"])!)
  .refine((ms) => ms <= 86_400_000, "at most 24h");

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
    forks: z
      .enum(["approve", "run", "skip"])
      .default("approve")
      .describe(
        "Pull requests from forks, read from the base branch: run once someone with write access approves (default), always run, or never",
      ),
    runs: z
      .array(
        z.strictObject({
          specs: z.array(UnderAssure).min(1).max(50).describe("Spec files: paths or globs under .assure/"),
          environments: z.array(Name).min(1).max(20).describe("Environment names in the project"),
          on_deployment: z
            .string()
            .min(1)
            .max(255)
            .optional()
            .describe(
              "Wait for a successful deployment of the commit to this GitHub environment, and test the agent at its environment_url",
            ),
          executor: z
            .enum(["service", "local"])
            .default("service")
            .describe(
              "Who executes these runs: the service (default), or someone outside it who uploads them (assure test --upload); local runs count only where the base branch's executed_outside_service allows",
            ),
          deployment_timeout: Duration.default(30 * 60_000).describe(
            "How long the runs wait for the deployment, or for their agent to be ready, before the decision gives up (default 30m)",
          ),
        }),
      )
      .min(1)
      .max(20),
    // Read from the base branch: how a pull request is judged against it.
    ...ChangeSettings.shape,
  })
  .meta({ id: "AssureConfig", title: "assure repository configuration (.assure/config.yml)" });
export type AssureConfig = z.infer<typeof AssureConfig>;
