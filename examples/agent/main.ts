import { startExampleHttpAgent } from "./http-agent.js";
import { startExampleAgent } from "./server.js";

/**
 * `node build/examples/agent/main.js`: the example agent on PORT (default 8080), each answer after
 * AGENT_LATENCY_MS. `AGENT_PROTOCOL=http` starts the http agent that runs its own tools instead; it
 * exports its spans when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (with `OTEL_EXPORTER_OTLP_HEADERS`,
 * read by the OpenTelemetry exporter itself).
 */
const options = {
  port: Number(process.env.PORT ?? 8080),
  host: process.env.HOST ?? "127.0.0.1",
  latencyMs: Number(process.env.AGENT_LATENCY_MS ?? 0),
};
const agent =
  process.env.AGENT_PROTOCOL === "http"
    ? await startExampleHttpAgent({ ...options, ...(process.env.OTEL_EXPORTER_OTLP_ENDPOINT ? { traces: {} } : {}) })
    : await startExampleAgent(options);
console.log(JSON.stringify({ msg: `example agent listening at ${agent.baseUrl}`, base_url: agent.baseUrl }));
const stop = () => void agent.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
