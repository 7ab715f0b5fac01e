import type { RunSource } from "./runs.js";

/**
 * Which agent a run reaches. An environment's `base_url` may be a template filled from the run's
 * source (per-commit and per-PR preview deployments), and its `url_pattern` says which other URLs
 * (a deployment's, one a run names) its agent may be reached at. Pure functions of strings: the
 * contract validates with them, the server resolves and checks with them.
 */
export const URL_TEMPLATE_FIELDS = ["sha", "short_sha", "pull_request", "ref_slug"] as const;
export type UrlTemplateField = (typeof URL_TEMPLATE_FIELDS)[number];

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The placeholders a template names, in order, known or not. */
export const placeholdersOf = (template: string): string[] => [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);

export const isUrlTemplate = (url: string) => placeholdersOf(url).length > 0;

/** A branch as a DNS label: lower case, each run of other characters one `-`, at most 63 characters, no `-` at either end. */
export function refSlug(ref: string): string {
  return ref
    .replace(/^refs\/(heads|tags)\//, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 63)
    .replace(/^-+|-+$/g, "");
}

/** The values a source gives the placeholders; a field the source lacks is missing. */
export function templateValues(source: RunSource | null | undefined): Partial<Record<UrlTemplateField, string>> {
  if (!source) return {};
  const slug = source.ref ? refSlug(source.ref) : "";
  return {
    sha: source.commit_sha,
    short_sha: source.commit_sha.slice(0, 7),
    ...(source.pull_request !== undefined ? { pull_request: String(source.pull_request) } : {}),
    ...(slug ? { ref_slug: slug } : {}),
  };
}

/** Fills a template; names the fields the values lack. */
export function fillUrlTemplate(
  template: string,
  values: Partial<Record<UrlTemplateField, string>>,
): { url: string } | { missing: string[] } {
  const missing = placeholdersOf(template).filter((name) => values[name as UrlTemplateField] === undefined);
  if (missing.length > 0) return { missing: [...new Set(missing)] };
  return { url: template.replace(PLACEHOLDER, (_, name: string) => values[name as UrlTemplateField]!) };
}

/** Values shaped like real ones, to check that a template makes a valid URL. */
export const SAMPLE_TEMPLATE_VALUES: Record<UrlTemplateField, string> = {
  sha: "0123456789abcdef0123456789abcdef01234567",
  short_sha: "0123456",
  pull_request: "1",
  ref_slug: "main",
};

/**
 * A URL pattern: scheme, port and the rest exact, except that `*` matches one DNS label (or part
 * of one: `pr-*`) in the host, or one path segment (or part of one) in the path. Trailing slashes
 * do not count. Returns undefined for a pattern that is not an http(s) URL.
 */
export function compileUrlPattern(pattern: string): ((url: string) => boolean) | undefined {
  const sample = pattern.replaceAll("*", "x");
  if (!URL.canParse(sample)) return undefined;
  const shape = new URL(sample);
  if (!/^https?:$/.test(shape.protocol) || shape.username || shape.password || shape.search || shape.hash) {
    return undefined;
  }
  const match = /^(https?):\/\/([^/:]+)(?::(\d+))?(\/[^?#]*)?$/i.exec(pattern);
  if (!match) return undefined;
  const [, scheme, host, port, path = ""] = match;
  const glob = (text: string, oneOf: string) => text.split("*").map(escapeRegExp).join(`[^${oneOf}]+`);
  const hostRegExp = new RegExp(`^${glob(host!.toLowerCase(), "./:")}$`);
  const pathRegExp = new RegExp(`^${glob(trimSlashes(path), "/")}$`);
  const wantedPort = port && Number(port) !== defaultPort(scheme!) ? port : "";
  return (url: string) => {
    if (!URL.canParse(url)) return false;
    const candidate = new URL(url);
    return (
      candidate.protocol === `${scheme!.toLowerCase()}:` &&
      candidate.port === wantedPort &&
      !candidate.username &&
      !candidate.password &&
      !candidate.search &&
      !candidate.hash &&
      hostRegExp.test(candidate.hostname) &&
      pathRegExp.test(trimSlashes(candidate.pathname))
    );
  };
}

const trimSlashes = (path: string) => path.replace(/\/+$/, "");
const defaultPort = (scheme: string) => (scheme.toLowerCase() === "https" ? 443 : 80);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
