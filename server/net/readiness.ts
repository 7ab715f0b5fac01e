import { clockedCache, type Clock } from "../clock.js";
import { coerceError } from "../errors.js";
import type { EnvironmentTarget } from "../store/index.js";
import type { EgressPolicy } from "./egress.js";
import { sendOutbound } from "./http-request.js";

export type Readiness = { ready: true } | { ready: false; reason: string };

export interface ReadinessProbeOptions {
  egress: EgressPolicy;
  clock: Clock;
  timeoutMs?: number;
  /** How long a good answer is trusted. A bad one is trusted for a fifth of it, so recovery is seen soon. */
  cacheMs?: number;
}

/**
 * Answers "is this environment's agent entrypoint up?" with GET {base_url}{readiness_path}.
 * Concurrent callers share one probe, and the answer is cached briefly.
 */
export function makeReadinessProbe({ egress, clock, timeoutMs = 2000, cacheMs = 5000 }: ReadinessProbeOptions) {
  // An entry lives while its probe is under way, then as long as its answer is trusted.
  const cache = clockedCache<string, Promise<Readiness>>(clock, 10_000, timeoutMs + cacheMs);

  async function probe(target: EnvironmentTarget): Promise<Readiness> {
    const url = `${target.base_url.replace(/\/+$/, "")}${target.readiness_path}`;
    try {
      const response = await sendOutbound(egress, {
        url,
        headers: target.headers,
        timeoutMs,
        maxResponseBytes: 1024 * 1024,
      });
      if (response.status >= 200 && response.status < 300) return { ready: true };
      return { ready: false, reason: `GET ${url} answered HTTP ${response.status}` };
    } catch (raw) {
      return { ready: false, reason: `GET ${url} failed: ${coerceError(raw).message}` };
    }
  }

  return function checkReadiness(target: EnvironmentTarget): Promise<Readiness> {
    const key = `${target.environment_id} ${target.base_url}${target.readiness_path}`;
    const cached = cache.get(key);
    if (cached) return cached;
    const answer = probe(target);
    cache.set(key, answer);
    void answer.then((readiness) => {
      if (cache.get(key) !== answer) return;
      cache.set(key, answer, { ttl: readiness.ready ? cacheMs : Math.ceil(cacheMs / 5) });
    });
    return answer;
  };
}

export type CheckReadiness = ReturnType<typeof makeReadinessProbe>;
