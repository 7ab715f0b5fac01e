import {
  compileUrlPattern,
  fillUrlTemplate,
  isUrlTemplate,
  templateValues,
  type RunSource,
} from "../contract/index.js";
import { ApiError } from "../errors.js";
import type { EgressPolicy } from "../net/egress.js";
import type { EnvironmentRow } from "../store/index.js";

export interface RunAgent {
  /** The base URL the run calls. */
  url: string;
  /** Whether the URL is the commit's own (a template filled from its source, or a URL named for it). */
  perCommit: boolean;
}

/**
 * Which agent a run reaches: the URL named for it (a deployment's), else the environment's
 * base_url with its template filled from the run's source. A URL other than the environment's own
 * must match its url_pattern, and every URL must pass the egress policy; the environment's
 * credentials go to no other. Throws the API error that says which rule refused it.
 */
export function resolveRunAgent(
  environment: Pick<EnvironmentRow, "name" | "base_url" | "url_pattern">,
  source: RunSource | null | undefined,
  named: string | undefined,
  egress: Pick<EgressPolicy, "checkHost">,
): RunAgent {
  const filled = fillUrlTemplate(environment.base_url, templateValues(source));
  if (named === undefined && "missing" in filled) {
    throw new ApiError("SOURCE_INCOMPLETE", {
      message: `Environment '${environment.name}' reaches its agent at ${environment.base_url}, which needs what the run's source does not give.`,
      details: filled.missing.map((field) => ({
        path: `body.source.${sourceFieldOf(field)}`,
        message: `needed to fill {${field}}`,
      })),
    });
  }
  const own = "url" in filled ? filled.url.replace(/\/+$/, "") : undefined;
  const url = (named ?? own!).replace(/\/+$/, "");
  const allowedBy = environment.url_pattern ?? environment.base_url;
  const matches = environment.url_pattern ? compileUrlPattern(environment.url_pattern)!(url) : url === own;
  const refused = matches ? egress.checkHost(new URL(url).hostname) : `it does not match ${allowedBy}`;
  if (refused) {
    throw new ApiError("AGENT_URL_NOT_ALLOWED", {
      message: `Environment '${environment.name}' may not reach its agent at ${url}: ${refused}. Allowed: ${allowedBy}.`,
      details: [
        { path: named === undefined ? "body.environment_id" : "body.agent_url", message: `must match ${allowedBy}` },
      ],
    });
  }
  return { url, perCommit: named !== undefined || isUrlTemplate(environment.base_url) };
}

const sourceFieldOf = (field: string) =>
  field === "sha" || field === "short_sha" ? "commit_sha" : field === "ref_slug" ? "ref" : field;
