import type { ComponentChildren } from "preact";
import { renderToString } from "preact-render-to-string";

/** A page's whole HTML: the stylesheet from the service itself, no script anywhere. */
export function renderPage(title: string, body: ComponentChildren): string {
  return `<!doctype html>${renderToString(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{title}</title>
        <link rel="stylesheet" href="/assets/page.css" />
      </head>
      <body>
        <main>{body}</main>
      </body>
    </html>,
  )}`;
}

/** What no link opens (a tampered, expired or foreign one, or a resource that does not exist): the same page for all. */
export const NOT_FOUND_PAGE = renderPage("Not found", [
  <h1>Not found</h1>,
  <p>This page does not exist, or the link to it has expired. Ask for a new link where you found this one.</p>,
]);

/** A status, coloured by what it means (the word says it too). */
export const Status = ({ value }: { value: string }) => <span class={value}>{value}</span>;

/** An evidence ref as a link: to its element on a page when one shows it, else the API path as text. */
export function Ref({ href, label }: { href: string | undefined; label: string }) {
  return href ? <a href={href}>{label}</a> : <code>{label}</code>;
}

/** A list of evidence refs as numbered links (`[base 1]` with a prefix), the first `max`. */
export function Refs({
  refs,
  hrefOf,
  prefix = "",
  max = 10,
}: {
  refs: readonly string[];
  hrefOf: (ref: string) => string | undefined;
  prefix?: string;
  max?: number;
}) {
  return (
    <>
      {refs.slice(0, max).map((ref, i) => (
        <>
          {i > 0 && " "}
          <Ref href={hrefOf(ref)} label={`[${prefix}${i + 1}]`} />
        </>
      ))}
      {refs.length > max && <span class="muted"> +{refs.length - max}</span>}
    </>
  );
}

export { percent } from "../specs/pass-rate.js";
