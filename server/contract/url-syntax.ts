import { URL_TEMPLATE_FIELDS } from "./agent-urls.js";

/**
 * The http(s) URLs the API takes, as regular expressions the OpenAPI document publishes: what the
 * WHATWG URL parser accepts and the contract's checks allow (no credentials; no query or fragment
 * where they are refused), so a URL a client checks against the document is one the service
 * takes. They are stricter than the parser only at its edges (IPv6 is written in full or as
 * `[::1]`, a port without leading zeros).
 */
const OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
const IPV6 = "\\[(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|::1)\\]";
const PORT = "(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?";
const PATH_CHARACTER = "[A-Za-z0-9._~!$&'()*+,;=:@%-]";
const QUERY = "(?:\\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?";

/** A host name: labels of letters, digits and `-`, the last starting with a letter (a numeric one would be read as IPv4). */
const hostName = (extra: string) => `(?:(?:[A-Za-z0-9-]${extra})+\\.)*[A-Za-z](?:[A-Za-z0-9-]${extra})*`;
const path = (extra: string) => `(?:/(?:${PATH_CHARACTER}${extra})*)*`;

/** An http(s) URL without credentials or fragment; a query allowed (a webhook's, an agent's deployment). */
export const HTTP_URL_WITH_QUERY_PATTERN = `^https?://(?:${hostName("")}|${IPV4}|${IPV6})${PORT}${path("")}${QUERY}$`;

const PLACEHOLDER = `|\\{(?:${URL_TEMPLATE_FIELDS.join("|")})\\}`;

/** An agent's base URL that may hold placeholders (`{sha}`, …) in its host's labels and its path. */
export const URL_TEMPLATE_PATTERN = `^https?://(?:${hostName(PLACEHOLDER)}|${IPV4}|${IPV6})${PORT}${path(PLACEHOLDER)}$`;

/** A URL pattern: `*` stands for (part of) one host label or path segment; no IPv6 host. */
export const URL_GLOB_PATTERN = `^https?://(?:${hostName("|\\*")}|${IPV4})${PORT}${path("")}$`;
