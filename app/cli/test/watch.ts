import { setTimeout as sleep } from "node:timers/promises";

/** How long changes are gathered before a run starts (an editor writes a file in several steps). */
const SETTLE_MS = 200;

/**
 * `--watch`: calls `onChange` whenever one of the files changes (one run at a time; changes made
 * during a run start one more after it), then watches the files it returns. Resolves once `stopped()`.
 */
export async function watchFiles(
  files: readonly string[],
  stopped: () => boolean,
  onChange: () => Promise<readonly string[]>,
): Promise<void> {
  const { watch } = await import("chokidar");
  let watched = new Set(files);
  const watcher = watch([...watched], { ignoreInitial: true, atomic: true });
  let changed = false;
  watcher.on("all", () => {
    changed = true;
  });
  await new Promise<void>((resolve) => watcher.once("ready", () => resolve()));
  const waiting = () => process.stderr.write(`Watching ${watched.size} file(s) for changes; Ctrl-C stops.\n`);
  waiting();
  try {
    while (!stopped()) {
      await sleep(SETTLE_MS);
      if (!changed || stopped()) continue;
      changed = false;
      const next = new Set(await onChange());
      watcher.unwatch([...watched].filter((file) => !next.has(file)));
      watcher.add([...next].filter((file) => !watched.has(file)));
      watched = next;
      waiting();
    }
  } finally {
    await watcher.close();
  }
}
