import { startExampleAgent } from "./server.js";

/** `node build/examples/agent/main.js`: the example agent on PORT (default 8080). */
const agent = await startExampleAgent({
  port: Number(process.env.PORT ?? 8080),
  host: process.env.HOST ?? "127.0.0.1",
  latencyMs: Number(process.env.AGENT_LATENCY_MS ?? 0),
});
console.log(JSON.stringify({ msg: `example agent listening at ${agent.baseUrl}`, base_url: agent.baseUrl }));
const stop = () => void agent.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
