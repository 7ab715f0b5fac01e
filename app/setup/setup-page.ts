import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../../server/clock.js";
import type { GitHubCredentials, GitHubSettings } from "../../server/config.js";
import { coerceError } from "../../server/errors.js";
import type { Logger } from "../../server/log.js";
import type { ServiceStore } from "../../server/store/service-store.js";
import { SETUP_CALLBACK_PATH, SETUP_PATH, appManifest } from "./manifest.js";

/** The setting the App's credentials are kept under, sealed. */
const CREDENTIALS = "github_app";
/** GitHub lets the manifest flow take an hour. */
const FLOW_MS = 3_600_000;

interface StoredApp {
  app_id: number;
  slug: string;
  html_url: string;
  pem: string;
  webhook_secret: string;
  client_id: string;
  client_secret: string;
  created_at: string;
}

/** The App's credentials the setup page stored, if it did. */
export async function storedAppCredentials(
  store: Pick<ServiceStore, "getSecretSetting">,
): Promise<GitHubCredentials | undefined> {
  const stored = await store.getSecretSetting(CREDENTIALS);
  if (!stored) return undefined;
  const app = JSON.parse(stored) as StoredApp;
  return {
    appId: String(app.app_id),
    privateKey: app.pem,
    privateKeyPath: undefined,
    webhookSecret: app.webhook_secret,
  };
}

export interface AppSetupDeps {
  settings: GitHubSettings;
  store: ServiceStore;
  log: Logger;
  clock: Clock;
}

/**
 * Registering the App in a click, GitHub's manifest flow in its three steps: the page posts the
 * manifest (`app.yml` with this service's addresses) to GitHub, GitHub sends the browser back with
 * a code, and the service trades the code for the App's credentials, which it keeps sealed for its
 * next start. The page opens only with the one-time token printed in the log at start.
 */
export function makeAppSetup({ settings, store, log, clock }: AppSetupDeps) {
  const token = randomBytes(24).toString("base64url");
  const states = new Map<string, number>();
  let created: StoredApp | undefined;

  const tokenMatches = (given: string | null) => {
    const a = Buffer.from(given ?? "");
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };

  function page(res: ServerResponse, url: URL): void {
    if (!tokenMatches(url.searchParams.get("token"))) {
      return html(
        res,
        401,
        "Setup token needed",
        "<p>This page creates assure's GitHub App. Open it with the one-time setup token that assure printed in its log when it started.</p>",
      );
    }
    if (created) return html(res, 410, "The App exists", installed(created));
    const state = randomBytes(16).toString("base64url");
    const now = clock.now().getTime();
    for (const [old, until] of states) if (until <= now) states.delete(old);
    states.set(state, now + FLOW_MS);
    const org = url.searchParams.get("org");
    const owner = org ? `/organizations/${encodeURIComponent(org)}` : "";
    const action = `${settings.webUrl}${owner}/settings/apps/new?state=${state}`;
    const manifest = appManifest(settings, url.searchParams.get("name") ?? undefined);
    html(
      res,
      200,
      "Create assure's GitHub App",
      `<p>GitHub will create the App <strong>${escape(manifest.name)}</strong>${org ? ` for the organization <strong>${escape(org)}</strong>` : " for your account"}, sending its webhooks to <code>${escape(manifest.hook_attributes.url)}</code>, with these permissions: ${Object.entries(
        manifest.default_permissions,
      )
        .map(([name, level]) => `${escape(name)}: ${level}`)
        .join(", ")}.</p>
<form method="post" action="${escape(action)}">
<input type="hidden" name="manifest" value="${escape(JSON.stringify(manifest))}">
<button type="submit">Create the GitHub App</button>
</form>
<p>For an organization, open this page with <code>&amp;org=&lt;organization&gt;</code>; to name the App otherwise, <code>&amp;name=&lt;name&gt;</code>.</p>`,
    );
  }

  async function callback(res: ServerResponse, url: URL): Promise<void> {
    const state = url.searchParams.get("state") ?? "";
    const code = url.searchParams.get("code");
    const until = states.get(state);
    if (!code || until === undefined || until <= clock.now().getTime()) {
      return html(
        res,
        400,
        "Start again",
        `<p>This link is not from a setup begun here in the last hour. Open the setup page again.</p>`,
      );
    }
    states.delete(state);
    try {
      const { ProbotOctokit } = await import("probot");
      const { data } = await new ProbotOctokit({ baseUrl: settings.apiBaseUrl }).rest.apps.createFromManifest({ code });
      const app: StoredApp = {
        app_id: data.id,
        slug: data.slug ?? "",
        html_url: data.html_url,
        pem: data.pem,
        webhook_secret: data.webhook_secret ?? "",
        client_id: data.client_id,
        client_secret: data.client_secret,
        created_at: clock.now().toISOString(),
      };
      await store.write(["putSecretSetting", CREDENTIALS, JSON.stringify(app)]);
      created = app;
      log.info(
        `GitHub App ${app.slug} (id ${app.app_id}) created; its credentials are stored, sealed. Install it at ${app.html_url}/installations/new, then restart assure to turn the integration on.`,
      );
      html(res, 200, "GitHub App created", installed(app));
    } catch (raw) {
      const error = coerceError(raw);
      log.error({ err: error }, "Could not create the GitHub App from its manifest");
      html(
        res,
        502,
        "GitHub did not create the App",
        `<p>${escape(error.message)}</p><p>Open the setup page again to start over.</p>`,
      );
    }
  }

  return {
    /** The one-time token that opens the setup page. */
    token,
    pageUrl: `${settings.publicBaseUrl}${SETUP_PATH}?token=${token}`,
    /** Whether it answers this path. */
    handles: (path: string) => path === SETUP_PATH || path === SETUP_CALLBACK_PATH,
    async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const url = new URL(req.url ?? "/", settings.publicBaseUrl);
      if (req.method !== "GET") return html(res, 405, "Method not allowed", "");
      if (url.pathname === SETUP_PATH) return page(res, url);
      return callback(res, url);
    },
  };
}

export type AppSetup = ReturnType<typeof makeAppSetup>;

function installed(app: StoredApp): string {
  const install = `${app.html_url}/installations/new`;
  return `<p>The GitHub App <strong>${escape(app.slug)}</strong> (id ${app.app_id}) exists, and assure keeps its credentials, sealed.</p>
<ol><li><a href="${escape(install)}">Install it</a> on the repositories to gate.</li><li>Restart assure: it starts with the App's credentials.</li></ol>`;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function html(res: ServerResponse, status: number, title: string, body: string): void {
  const text = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)} · assure</title></head><body><h1>${escape(title)}</h1>${body}</body></html>`;
  res
    .writeHead(status, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
    })
    .end(text);
}
