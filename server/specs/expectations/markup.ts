import { TEXT_LIMIT } from "../facts.js";

/**
 * A reply as a markdown renderer (with HTML let through, as many are) would read it: what would be
 * rendered as markup, and what is only shown. Every pattern here is bounded, so a reply of any
 * shape is read in time linear in its length.
 */

/** The part of a reply that is rendered: read up to `TEXT_LIMIT`, its code spans and fenced code blocks blanked (shown as text, never run). */
export function renderedPart(reply: string): string {
  return withoutCodeSpans(withoutFencedCode(reply.slice(0, TEXT_LIMIT)));
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

function withoutFencedCode(text: string): string {
  const lines = text.split("\n");
  let open: string | undefined;
  return lines
    .map((line) => {
      const fence = FENCE.exec(line)?.[1];
      if (open === undefined) {
        if (fence === undefined || (fence[0] === "`" && line.slice(line.indexOf(fence) + fence.length).includes("`"))) {
          return line;
        }
        open = fence;
        return "";
      }
      // A fence closes with at least as many of the same character, and nothing after it; an unclosed one runs to the end.
      if (
        fence !== undefined &&
        fence[0] === open[0] &&
        fence.length >= open.length &&
        /^\s*$/.test(line.slice(line.indexOf(fence) + fence.length))
      ) {
        open = undefined;
      }
      return "";
    })
    .join("\n");
}

/** A code span opens with a run of backticks and closes at the next run of exactly as many; a run with no partner is literal. */
function withoutCodeSpans(text: string): string {
  const runs = [...text.matchAll(/`+/g)].map((match) => ({ start: match.index, length: match[0].length }));
  const partner: (number | undefined)[] = [];
  const nextOfLength = new Map<number, number>();
  for (let i = runs.length - 1; i >= 0; i--) {
    partner[i] = nextOfLength.get(runs[i]!.length);
    nextOfLength.set(runs[i]!.length, i);
  }
  const kept: string[] = [];
  let from = 0;
  for (let i = 0; i < runs.length; i++) {
    const close = partner[i];
    if (close === undefined) continue;
    kept.push(text.slice(from, runs[i]!.start), " ");
    from = runs[close]!.start + runs[close]!.length;
    i = close;
  }
  kept.push(text.slice(from));
  return kept.join("");
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  colon: ":",
  sol: "/",
  bsol: "\\",
  period: ".",
  lpar: "(",
  rpar: ")",
  tab: "\t",
  newline: "\n",
  nbsp: "\u00a0",
};

/** Character references decoded as a browser does in an attribute value or a markdown link: `&#106;`, `&#x6A`, `&colon;`. */
export function decodeEntities(value: string): string {
  return value.replace(/&(?:#(\d{1,8})|#x([0-9a-f]{1,6})|([a-z]{2,8}));?/gi, (entity, decimal, hex, name) => {
    if (name !== undefined) return NAMED_ENTITIES[(name as string).toLowerCase()] ?? entity;
    const code = decimal !== undefined ? Number(decimal) : parseInt(hex as string, 16);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
  });
}

/** A URL as a browser reads it: entities decoded, leading controls and spaces dropped, tabs and line breaks inside removed. */
export function urlAsRead(raw: string): string {
  return decodeEntities(raw)
    .replace(/^[\p{Cc} ]+/u, "")
    .replace(/[\t\n\r]/g, "");
}

export interface HtmlTag {
  /** Lower case. */
  name: string;
  /** Everything between the name and the tag's end. */
  rest: string;
  attributes: { name: string; value: string }[];
}

const TAG = /<([a-z][a-z0-9:-]{0,40})([^<>]{0,4000})/gi;
const ATTRIBUTE = /([^\s"'<>/=]{1,100})\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g;

/** Every HTML start tag in a text, with its attributes (values as written, entities not decoded). */
export function htmlTags(text: string): HtmlTag[] {
  return [...text.matchAll(TAG)].map(([, name, rest]) => ({
    name: name!.toLowerCase(),
    rest: rest!,
    attributes: [...rest!.matchAll(ATTRIBUTE)].map(([, attribute, double, single, bare]) => ({
      name: attribute!.toLowerCase(),
      value: double ?? single ?? bare ?? "",
    })),
  }));
}

export interface MarkdownLink {
  image: boolean;
  /** As written. */
  destination: string;
}

// Link text may hold one level of brackets: ![a [b] c](…).
const LINK_TEXT = String.raw`\[((?:[^\[\]\n]|\[[^\[\]\n]{0,200}\]){0,1000})\]`;
const INLINE = new RegExp(String.raw`(!?)${LINK_TEXT}\(\s*(?:<([^<>\n]{0,4000})>|([^\s)]{0,4000}))`, "g");
const REFERENCE = new RegExp(String.raw`(!?)${LINK_TEXT}(?:\[([^\[\]\n]{0,1000})\])?`, "g");
const DEFINITION = /^ {0,3}\[([^\]\n]{1,1000})\]:[ \t]*\n?[ \t]*(?:<([^<>\n]{0,4000})>|(\S{1,4000}))/gm;
const AUTOLINK = /<([a-z][a-z0-9+.-]{1,31}:[^<>\s]{0,4000})>/gi;

const label = (text: string) => text.trim().replace(/\s+/g, " ").toLowerCase();

/** Every link and image in a markdown text: inline, by reference (`![alt][ref]` with `[ref]: url`), and autolinks. */
export function markdownLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const [, bang, , angled, bare] of text.matchAll(INLINE)) {
    links.push({ image: bang === "!", destination: angled ?? bare ?? "" });
  }
  const definitions = new Map<string, string>();
  for (const [, name, angled, bare] of text.matchAll(DEFINITION)) {
    const key = label(name!);
    if (!definitions.has(key)) definitions.set(key, angled ?? bare ?? "");
  }
  if (definitions.size > 0) {
    for (const [, bang, linkText, reference] of text.matchAll(REFERENCE)) {
      const destination = definitions.get(label(reference || linkText!));
      if (destination !== undefined) links.push({ image: bang === "!", destination });
    }
  }
  for (const [, destination] of text.matchAll(AUTOLINK)) links.push({ image: false, destination: destination! });
  return links;
}
