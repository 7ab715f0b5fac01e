// The engine bench's baseline as a process of its own, started fresh for each concurrency level
// like the service: `node bench/engine-baseline.js` with its settings as JSON in BENCH_BASELINE.
// It runs its warm-up runs, prints {"ready":true}, then answers each line `{"runs":N}` on stdin
// with one JSON line: the wall time, the agent calls made, its own CPU time and the example
// agent's over those runs (bench/lib/agent-client.js).
import { createInterface } from "node:readline";
import { makeConversationClient, runBaseline } from "./lib/agent-client.js";
import { readProc } from "./lib/proc.js";

const { baseUrl, agentPid, model, spec, warmupRuns, concurrency } = JSON.parse(process.env.BENCH_BASELINE ?? "{}");
const client = makeConversationClient({ baseUrl, model, spec });
await runBaseline(client, { runs: warmupRuns, concurrency });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const { runs } = JSON.parse(line);
  const agentBefore = readProc(agentPid);
  const measured = await runBaseline(client, { runs, concurrency });
  const agentCpuMs = readProc(agentPid).cpuMs - agentBefore.cpuMs;
  process.stdout.write(`${JSON.stringify({ ...measured, agentCpuMs })}\n`);
}
