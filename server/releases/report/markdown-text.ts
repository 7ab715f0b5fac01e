/**
 * Text from outside (an agent's reply, its tool calls' arguments, a reason quoting them) as a
 * Markdown code span: nothing in it is read as Markdown or HTML — no link, image, mention or tag —
 * and no run of backticks in it can close the span. On one line, so it stays inside its list item.
 * Not for a table cell: a `|` there ends the cell even inside a code span.
 */
export function codeSpan(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat === "") return "` `";
  const body = flat;
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  // A span's content that starts or ends with a backtick is padded: one space each side is stripped.
  const pad = body.startsWith("`") || body.endsWith("`") ? " " : "";
  return `${fence}${pad}${body}${pad}${fence}`;
}

/**
 * Text from a spec (a note it carries) as plain text in a Markdown table cell: every ASCII
 * punctuation mark escaped, so nothing in it is read as Markdown or HTML, and on one line.
 */
export function inertCell(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[!-/:-@[-`{-~]/g, (mark) => `\\${mark}`);
}
