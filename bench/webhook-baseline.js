// The least a correct GitHub webhook receiver does, for `npm run bench -- github` to compare the
// service's webhook route with: check the HMAC signature of the raw body, keep the delivery and
// queue its processing in one SQLite commit (WAL, synchronous=FULL, as the service), answer 200.
// No framework, no Probot, no writer thread.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import Database from "better-sqlite3";

const secret = process.env.WEBHOOK_SECRET;
const db = new Database(process.env.ASSURE_DB);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(`CREATE TABLE IF NOT EXISTS deliveries (delivery_id TEXT PRIMARY KEY, event TEXT, payload TEXT, received_at TEXT);
  CREATE TABLE IF NOT EXISTS jobs (job_key TEXT PRIMARY KEY, payload TEXT, run_at TEXT)`);
const insertDelivery = db.prepare("INSERT INTO deliveries VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING");
const insertJob = db.prepare("INSERT INTO jobs VALUES (?, ?, ?) ON CONFLICT DO NOTHING");
const receive = db.transaction((id, event, payload, now) => {
  if (insertDelivery.run(id, event, payload, now).changes === 1) {
    insertJob.run(`delivery:${id}`, JSON.stringify({ id }), now);
  }
});

createServer((req, res) => {
  if (req.method === "GET" && req.url === "/healthz") return res.writeHead(200).end("ok");
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
    const given = Buffer.from(String(req.headers["x-hub-signature-256"] ?? ""));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return res.writeHead(400).end("bad signature");
    }
    JSON.parse(body.toString());
    receive(
      String(req.headers["x-github-delivery"]),
      String(req.headers["x-github-event"]),
      body.toString(),
      new Date().toISOString(),
    );
    res.writeHead(200).end("ok");
  });
}).listen(Number(process.env.PORT), process.env.HOST);
