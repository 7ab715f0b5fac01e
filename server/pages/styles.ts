/**
 * The pages' one stylesheet, served from /assets/page.css (the Content-Security-Policy allows
 * styles from the service itself only). Light and dark follow the reader's system; a cited element
 * is highlighted when a link lands on it (`:target`), with no script.
 */
export const PAGE_CSS = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa; --line: #d1d9e0;
  --pass: #1a7f37; --fail: #cf222e; --warn: #9a6700; --link: #0969da; --mark: #fff8c5; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23; --line: #3d444d;
    --pass: #3fb950; --fail: #f85149; --warn: #d29922; --link: #4493f8; --mark: #3b2e00; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 1rem 0 0.25rem; }
a { color: var(--link); }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: var(--panel); border: 1px solid var(--line); padding: 0.5rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: 0.25rem 0; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
th { background: var(--panel); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0.5rem 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.verdict { display: inline-block; padding: 0.1rem 0.6rem; border-radius: 1rem; font-weight: 600; border: 2px solid currentColor; }
.passed, .PASS, .ALLOWED, .completed { color: var(--pass); }
.failed, .FAIL, .BLOCKED, .error, .errored, .ERROR { color: var(--fail); }
.inconclusive, .INCONCLUSIVE, .PENDING, .pending, .waived, .quarantined, .interrupted { color: var(--warn); }
.muted { color: var(--muted); }
.conversation { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem; margin: 0.75rem 0; }
.turn { border-left: 3px solid var(--line); padding-left: 0.75rem; margin: 0.5rem 0; }
.entry { margin: 0.25rem 0; }
.entry .who { font-weight: 600; }
nav.pages { display: flex; gap: 1rem; margin: 1rem 0; flex-wrap: wrap; }
:target { outline: 3px solid var(--warn); outline-offset: 2px; background: var(--mark); scroll-margin-top: 2rem; }
@media (max-width: 40rem) { main { padding: 0.5rem; } dl.facts { grid-template-columns: 1fr; } dl.facts dt { margin-top: 0.4rem; } }
@media print { :root { --fg: #000; --bg: #fff; --panel: #fff; } nav.pages { display: none; } a { color: inherit; } pre { white-space: pre-wrap; } }
`;
