// The engine bench's baseline as a process of its own, started fresh for each concurrency level
// like the service: `node bench/engine-baseline.js` with its settings as JSON in BENCH_BASELINE.
// It runs the warm-up runs, then the measured ones, and prints one JSON line: the wall time, the
// agent calls made, its own CPU time and the example agent's over the measured runs
// (bench/lib/agent-client.js).
import { makeConversationClient, runBaseline } from "./lib/agent-client.js";
import { readProc } from "./lib/proc.js";

const { baseUrl, agentPid, model, spec, warmupRuns, runs, concurrency } = JSON.parse(process.env.BENCH_BASELINE ?? "{}");
const client = makeConversationClient({ baseUrl, model, spec });
await runBaseline(client, { runs: warmupRuns, concurrency });
const agentBefore = readProc(agentPid);
const measured = await runBaseline(client, { runs, concurrency });
const agentCpuMs = readProc(agentPid).cpuMs - agentBefore.cpuMs;
process.stdout.write(`${JSON.stringify({ ...measured, agentCpuMs })}\n`);
