import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@jest/globals";
import GithubSlugger from "github-slugger";
import { marked, type Token, type Tokens } from "marked";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const DOCS = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** Every token of a Markdown document, nested ones included. */
function* walk(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const nested = token as {
      tokens?: Token[];
      items?: Token[];
      header?: { tokens: Token[] }[];
      rows?: { tokens: Token[] }[][];
    };
    if (nested.tokens) yield* walk(nested.tokens);
    if (nested.items) yield* walk(nested.items);
    if (nested.header) for (const cell of nested.header) yield* walk(cell.tokens);
    if (nested.rows) for (const row of nested.rows) for (const cell of row) yield* walk(cell.tokens);
  }
}

const tokensOf = (path: string) => marked.lexer(readFileSync(join(ROOT, path), "utf8"));

/** The anchors GitHub gives a document's headings. */
function anchorsOf(path: string): Set<string> {
  const slugger = new GithubSlugger();
  return new Set(
    [...walk(tokensOf(path))]
      .filter((token): token is Tokens.Heading => token.type === "heading")
      .map((heading) => slugger.slug(heading.text.replace(/`/g, ""))),
  );
}

describe("the docs' links", () => {
  it.each(DOCS)("in %s all lead somewhere: every relative file exists, every anchor is a heading there", (path) => {
    const broken: string[] = [];
    for (const token of walk(tokensOf(path))) {
      if (token.type !== "link") continue;
      const href = (token as Tokens.Link).href;
      if (/^[a-z]+:/i.test(href)) continue; // another site, or mailto:
      const [file = "", anchor] = href.split("#");
      const target = file === "" ? join(ROOT, path) : resolve(dirname(join(ROOT, path)), decodeURI(file));
      if (!existsSync(target)) {
        broken.push(`${href}: no file ${relative(ROOT, target)}`);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(relative(ROOT, target)).has(anchor)) {
        broken.push(`${href}: no heading #${anchor} in ${relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
