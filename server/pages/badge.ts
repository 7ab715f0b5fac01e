/** What a badge says of a branch's latest decision, and in what colour. */
const MESSAGES = {
  ALLOWED: { text: "release allowed", colour: "#1a7f37" },
  BLOCKED: { text: "release blocked", colour: "#cf222e" },
  PENDING: { text: "pending", colour: "#9a6700" },
  none: { text: "no decision", colour: "#59636e" },
} as const;

/** Text width in a badge's 11px sans-serif, about: good enough to size its boxes. */
const widthOf = (text: string) => Math.round(text.length * 6.6) + 10;

/**
 * A badge as teams put in READMEs (the quality-gate kind): `assure | release allowed`. Fixed words
 * only, so nothing in it comes from a user; it holds no script and no link.
 */
export function renderBadge(status: keyof typeof MESSAGES): string {
  const label = "assure";
  const { text, colour } = MESSAGES[status];
  const left = widthOf(label);
  const right = widthOf(text);
  const width = left + right;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" role="img" aria-label="${label}: ${text}">`,
    `<title>${label}: ${text}</title>`,
    `<rect width="${left}" height="20" fill="#555"/>`,
    `<rect x="${left}" width="${right}" height="20" fill="${colour}"/>`,
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">`,
    `<text x="${left / 2}" y="14">${label}</text>`,
    `<text x="${left + right / 2}" y="14">${text}</text>`,
    `</g></svg>`,
  ].join("");
}
