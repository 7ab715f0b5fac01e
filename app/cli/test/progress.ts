/** Where a run is, as the progress line shows it. */
export interface RunProgress {
  name: string;
  /** Planned conversations that ended, and how many there are in all. */
  ended: number;
  planned: number;
  status: string;
}

export interface Progress {
  update(runs: readonly RunProgress[]): void;
  /** Clears the live line (a terminal) before the report is printed. */
  done(): void;
}

const BAR = 24;
const TERMINAL = new Set(["COMPLETED", "INCONCLUSIVE", "FAILED"]);

/**
 * Progress on stderr: on a terminal, one line redrawn in place (a bar, conversations ended of
 * planned, the runs still going, the time); elsewhere (CI logs), a plain line when a run starts,
 * at each quarter of it, and when it ends.
 */
export function makeProgress(stream: NodeJS.WriteStream, { quiet = false, now = () => Date.now() } = {}): Progress {
  const started = now();
  if (quiet) return { update() {}, done() {} };
  if (stream.isTTY) {
    let drawn = false;
    return {
      update(runs) {
        const planned = runs.reduce((n, run) => n + run.planned, 0);
        const ended = runs.reduce((n, run) => n + Math.min(run.ended, run.planned), 0);
        const filled = planned === 0 ? 0 : Math.round((ended / planned) * BAR);
        const going = runs.filter((run) => !TERMINAL.has(run.status)).map((run) => run.name);
        const seconds = ((now() - started) / 1000).toFixed(1);
        const what = going.length === 0 ? "evaluated" : going.length === 1 ? going[0] : `${going.length} specs`;
        const line = `[${"#".repeat(filled)}${".".repeat(BAR - filled)}] ${ended}/${planned} conversations · ${what} · ${seconds}s`;
        stream.write(`\r\x1b[K${line.slice(0, Math.max(20, (stream.columns || 80) - 1))}`);
        drawn = true;
      },
      done() {
        if (drawn) stream.write("\r\x1b[K");
      },
    };
  }
  const said = new Map<string, string>();
  return {
    update(runs) {
      for (const run of runs) {
        const quarter = run.planned === 0 ? 0 : Math.floor((Math.min(run.ended, run.planned) / run.planned) * 4);
        const state = TERMINAL.has(run.status) ? run.status : run.status === "QUEUED" ? "" : `${quarter}`;
        if (state === "" || said.get(run.name) === state) continue;
        said.set(run.name, state);
        const seconds = ((now() - started) / 1000).toFixed(1);
        stream.write(
          TERMINAL.has(run.status)
            ? `${run.name}: ${run.status} (${run.ended}/${run.planned} conversations, ${seconds}s)\n`
            : `${run.name}: ${run.ended}/${run.planned} conversations (${seconds}s)\n`,
        );
      }
    },
    done() {},
  };
}
