// Load generation with autocannon. Latencies are collected from every response (autocannon's own
// histogram keeps whole milliseconds, too coarse for sub-millisecond endpoints), so slices of one
// target can be merged exactly.
import autocannon from "autocannon";
import { readProc } from "./proc.js";
import { percentile } from "./statistics.js";

export const CONNECTIONS = 10;

/** Sends one case's request to one target for `seconds`; resolves with what was seen. */
export async function runLoad(targetUrl, benchCase, seconds) {
  const latenciesMs = [];
  let unexpectedStatus = 0;
  const instance = autocannon({
    url: `${targetUrl}${benchCase.path}`,
    method: benchCase.method,
    headers: benchCase.headers,
    body: benchCase.body,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
  });
  instance.on("response", (_client, statusCode, _bytes, responseTimeMs) => {
    latenciesMs.push(responseTimeMs);
    if (statusCode !== benchCase.expectStatus) unexpectedStatus++;
  });
  const result = await instance;
  return {
    latenciesMs,
    seconds: result.duration,
    unexpectedStatus,
    errors: result.errors + result.timeouts,
  };
}

/** One target's slices as a single measurement. */
export function mergeSlices(slices) {
  const latencies = Float64Array.from(slices.flatMap((slice) => slice.latenciesMs)).sort();
  const seconds = slices.reduce((sum, slice) => sum + slice.seconds, 0);
  const cpuMs = slices.reduce((sum, slice) => sum + (slice.cpuMs ?? Number.NaN), 0);
  return {
    requests: latencies.length,
    seconds,
    requestsPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    /** The target process's CPU time (user + system) per request, where its pid was given. */
    cpuUsPerRequest: (cpuMs * 1000) / latencies.length,
    unexpectedStatus: slices.reduce((sum, slice) => sum + slice.unexpectedStatus, 0),
    errors: slices.reduce((sum, slice) => sum + slice.errors, 0),
    slices,
  };
}

/**
 * Warms both targets up, then measures them in alternating slices ordered service, baseline,
 * baseline, service, … so that a drift of the machine during the case weighs on both alike.
 */
export async function measurePair(
  benchCase,
  targets,
  { warmupSeconds, sliceSeconds, rounds: roundCount },
  { pids = {} } = {},
) {
  // A case may name a request per target (`perTarget`): each its own key and ids.
  const caseFor = (target) => benchCase.perTarget?.[target] ?? benchCase;
  await runLoad(targets.service, caseFor("service"), warmupSeconds);
  await runLoad(targets.baseline, caseFor("baseline"), warmupSeconds);
  const slices = { service: [], baseline: [] };
  for (let round = 0; round < roundCount; round++) {
    const order = round % 2 === 0 ? ["service", "baseline"] : ["baseline", "service"];
    for (const target of order) {
      slices[target].push(
        await withCpuTime(pids[target], () => runLoad(targets[target], caseFor(target), sliceSeconds)),
      );
    }
  }
  // Each round's two slices ran back to back: their ratio is what a change of the machine's speed
  // between rounds leaves alone.
  const rounds = slices.service.map((service, round) => ({ service, baseline: slices.baseline[round] }));
  return { service: mergeSlices(slices.service), baseline: mergeSlices(slices.baseline), rounds };
}

/** A slice with the CPU time its target's process spent on it, where the pid is known. */
async function withCpuTime(pid, measure) {
  if (pid === undefined) return measure();
  const before = readProc(pid).cpuMs;
  const slice = await measure();
  return { ...slice, cpuMs: readProc(pid).cpuMs - before };
}
