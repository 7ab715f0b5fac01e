// The OTLP ingest bench's baseline: `node bench/otlp-baseline.js` on PORT. A bare node:http server
// that does what any OTLP/HTTP receiver must: read the body, decode the ExportTraceServiceRequest
// with the same OpenTelemetry package the service uses, count its spans (`GET /spans` tells how many so far), and answer an
// ExportTraceServiceResponse in protobuf. No key, no framework, no span kept.
import { createServer } from "node:http";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js");
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = root.opentelemetry.proto.collector.trace.v1;
const ANSWER = Buffer.from(
  ExportTraceServiceResponse.encode({ partialSuccess: { rejectedSpans: 0, errorMessage: "" } }).finish(),
);

let spans = 0;
const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/healthz") return res.writeHead(200).end("ok");
  if (req.method === "GET" && req.url === "/spans") return res.writeHead(200).end(String(spans));
  if (req.method !== "POST" || req.url !== "/otlp/v1/traces") return res.writeHead(404).end();
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let message;
    try {
      message = ExportTraceServiceRequest.decode(Buffer.concat(chunks));
    } catch {
      return res.writeHead(400).end();
    }
    for (const resourceSpans of message.resourceSpans) {
      for (const scopeSpans of resourceSpans.scopeSpans) spans += scopeSpans.spans.length;
    }
    res.writeHead(200, { "content-type": "application/x-protobuf", "content-length": ANSWER.length }).end(ANSWER);
  });
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1");
process.on("SIGTERM", () => server.close(() => process.exit(0)));
