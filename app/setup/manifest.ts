import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { GitHubSettings } from "../../server/config.js";

/**
 * `app.yml` at the package's root: the App the setup page asks GitHub to create. Read relative to
 * this module, which sits two folders below the root both as source (app/setup/) and as the
 * service's bundle (build/app/).
 */
const MANIFEST_FILE = new URL("../../app.yml", import.meta.url);

export const SETUP_PATH = "/setup/github";
export const SETUP_CALLBACK_PATH = "/setup/github/callback";

export interface AppManifest {
  name: string;
  url: string;
  description?: string;
  public: boolean;
  hook_attributes: { url: string; active: boolean };
  redirect_url: string;
  default_permissions: Record<string, "read" | "write">;
  default_events: string[];
}

/** The manifest for this service: `app.yml` with the service's own addresses, and an App name of the operator's choosing. */
export function appManifest(
  settings: Pick<GitHubSettings, "publicBaseUrl" | "webhookPath">,
  name?: string,
): AppManifest {
  const template = parse(readFileSync(MANIFEST_FILE, "utf8")) as Omit<
    AppManifest,
    "url" | "hook_attributes" | "redirect_url"
  >;
  return {
    ...template,
    ...(name ? { name } : {}),
    url: settings.publicBaseUrl,
    hook_attributes: { url: `${settings.publicBaseUrl}${settings.webhookPath}`, active: true },
    redirect_url: `${settings.publicBaseUrl}${SETUP_CALLBACK_PATH}`,
  };
}
