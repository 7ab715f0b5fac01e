import { describe, expect, it } from "@jest/globals";
import { makeProgress, type RunProgress } from "../../../../app/cli/test/progress.js";

/** A stream that keeps what is written, a terminal or not. */
function streamOf(isTTY: boolean) {
  const written: string[] = [];
  const stream = { isTTY, columns: 80, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
  return { stream, written };
}
const run = (ended: number, status: string, name = "refunds"): RunProgress => ({ name, ended, planned: 8, status });

describe("assure test's progress", () => {
  it("redraws one line on a terminal: a bar, conversations ended of planned, what still runs, the time; and clears it", () => {
    let now = 0;
    const { stream, written } = streamOf(true);
    const progress = makeProgress(stream, { now: () => now });
    now = 1500;
    progress.update([run(2, "RUNNING"), run(0, "QUEUED", "other")]);
    expect(written.at(-1)).toBe("\r\x1b[K[###.....................] 2/16 conversations · 2 specs · 1.5s");
    progress.update([run(8, "COMPLETED"), run(8, "EVALUATING", "other")]);
    expect(written.at(-1)).toBe("\r\x1b[K[########################] 16/16 conversations · other · 1.5s");
    progress.done();
    expect(written.at(-1)).toBe("\r\x1b[K");
  });

  it("writes plain lines elsewhere (CI logs): when a run starts, at each quarter, when it ends; each once", () => {
    const { stream, written } = streamOf(false);
    const progress = makeProgress(stream, { now: () => 0 });
    for (const state of [
      run(0, "QUEUED"),
      run(0, "RUNNING"),
      run(1, "RUNNING"),
      run(2, "RUNNING"),
      run(5, "RUNNING"),
      run(8, "EVALUATING"),
      run(8, "COMPLETED"),
    ]) {
      progress.update([state]);
    }
    expect(written).toEqual([
      "refunds: 0/8 conversations (0.0s)\n",
      "refunds: 2/8 conversations (0.0s)\n",
      "refunds: 5/8 conversations (0.0s)\n",
      "refunds: 8/8 conversations (0.0s)\n",
      "refunds: COMPLETED (8/8 conversations, 0.0s)\n",
    ]);
  });

  it("says nothing with --quiet", () => {
    const { stream, written } = streamOf(true);
    const progress = makeProgress(stream, { quiet: true });
    progress.update([run(1, "RUNNING")]);
    progress.done();
    expect(written).toEqual([]);
  });
});
