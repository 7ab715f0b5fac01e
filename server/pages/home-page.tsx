import { renderPage } from "./layout.js";

/** What `GET /` says: what this service is, and where its API document, health and docs are. */
export const HOME_PAGE = renderPage("assure", [
  <h1>assure</h1>,
  <p>
    This service runs assurance runs against AI agents, keeps their evidence (conversations, tool calls, evaluations,
    security findings, gates) and decides whether a commit may be released.
  </p>,
  <h2>Where to go</h2>,
  <ul>
    <li>
      <a href="/v1/openapi.json">The API (OpenAPI 3.1)</a>: every endpoint under <code>/v1</code>, with an API key.
    </li>
    <li>
      <a href="/v1/schemas/test-spec.json">The test spec format</a> (JSON Schema, for editors) and{" "}
      <a href="/v1/schemas/events.json">the events</a> runs record and webhooks send.
    </li>
    <li>
      <a href="/healthz">Alive</a> and <a href="/readyz">ready</a>: the health checks.
    </li>
    <li>
      The evidence of a run or a decision opens from the signed link its API answer carries (<code>links.html</code>)
      and from the check run on GitHub.
    </li>
  </ul>,
  <p>
    How to set it up, write specs and gate pull requests: the <code>README.md</code> and <code>docs/</code> of the
    assure repository.
  </p>,
]);
