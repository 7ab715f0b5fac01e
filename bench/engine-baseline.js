// The engine bench's baseline as a process of its own, started fresh for each level like the
// service: `node bench/engine-baseline.js` with its settings as JSON in BENCH_BASELINE. It holds
// the run's conversations once against the warm-up agent, prints {"ready":true}, then answers
// each line `{}` on stdin by holding them against the measured agent, with one JSON line: the
// wall time, the agent calls made, its own CPU time and the example agent's
// (bench/lib/agent-client.js).
import { createInterface } from "node:readline";
import { makeConversationClient, runBaseline } from "./lib/agent-client.js";
import { readProc } from "./lib/proc.js";

const { baseUrl, warmupBaseUrl, agentPid, model, spec, concurrency } = JSON.parse(process.env.BENCH_BASELINE ?? "{}");
await runBaseline(makeConversationClient({ baseUrl: warmupBaseUrl, model, spec }), { concurrency });
const client = makeConversationClient({ baseUrl, model, spec });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

for await (const _line of createInterface({ input: process.stdin })) {
  const agentBefore = readProc(agentPid);
  const measured = await runBaseline(client, { concurrency });
  const agentCpuMs = readProc(agentPid).cpuMs - agentBefore.cpuMs;
  process.stdout.write(`${JSON.stringify({ ...measured, agentCpuMs })}\n`);
}
