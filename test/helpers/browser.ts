import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium, which `.ci/run` installs when it is missing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Headless Chromium as these machines need it: no sandbox (tests run as root), no background
 * networking (the network is closed: its connections would be refused), and a fresh profile
 * (Playwright makes a new one for each launch).
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
