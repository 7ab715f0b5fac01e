// A webhook consumer of assure, as the spec asks consumers to be (§6): (1) verify the signature,
// (2) validate the event, (3) deduplicate on event_id, (4) persist it, (5) process it
// asynchronously. Runnable: `WEBHOOK_SECRET=whsec_… PORT=8090 node build/examples/webhook-consumer.js`
// (after `npm run build`), then register http://<host>:8090/ with POST /v1/webhooks.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { WebhookEvent } from "../server/contract/index.js";

export interface ConsumerOptions {
  /** The endpoint's secret, as POST /v1/webhooks (or rotate-secret) showed it. */
  secret: string;
  /** Where received events are kept: a SQLite file. */
  dbPath: string;
  /** What to do with each event, once: called in the background, in the order received. */
  process(event: WebhookEvent): Promise<void>;
}

async function readRaw(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function makeWebhookConsumer({ secret, dbPath, process }: ConsumerOptions) {
  const webhook = new Webhook(secret);
  const db = new Database(dbPath);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec(
    `CREATE TABLE IF NOT EXISTS received (event_id TEXT PRIMARY KEY, body TEXT NOT NULL, received_at TEXT NOT NULL, processed_at TEXT)`,
  );
  const keep = db.prepare(
    "INSERT INTO received (event_id, body, received_at) VALUES (?, ?, ?) ON CONFLICT (event_id) DO NOTHING",
  );
  const next = db.prepare("SELECT event_id, body FROM received WHERE processed_at IS NULL ORDER BY rowid LIMIT 1");
  const done = db.prepare("UPDATE received SET processed_at = ? WHERE event_id = ?");
  let working = false;

  /** (5) Processes what is kept and not yet processed, one at a time, after the answer was sent. */
  async function drain(): Promise<void> {
    if (working) return;
    working = true;
    try {
      for (
        let row = next.get() as { event_id: string; body: string } | undefined;
        row;
        row = next.get() as typeof row
      ) {
        await process(WebhookEvent.parse(JSON.parse(row.body)));
        done.run(new Date().toISOString(), row.event_id);
      }
    } finally {
      working = false;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readRaw(req);
    // (1) Verify: the signature over webhook-id, webhook-timestamp and the raw body, and the timestamp's age.
    let payload: unknown;
    try {
      payload = webhook.verify(body, req.headers as Record<string, string>);
    } catch (error) {
      res.writeHead(error instanceof WebhookVerificationError ? 401 : 400).end();
      return;
    }
    // (2) Validate: an event of the shape the contract says.
    const event = WebhookEvent.safeParse(payload);
    if (!event.success) {
      res.writeHead(400).end();
      return;
    }
    // (3) Deduplicate and (4) persist in one step: a delivery sent twice is kept once, by event_id.
    keep.run(event.data.event_id, body, new Date().toISOString());
    res.writeHead(204).end();
    void drain();
  }

  return { handle, drain, db, close: () => db.close() };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const consumer = makeWebhookConsumer({
    secret: process.env.WEBHOOK_SECRET ?? "",
    dbPath: process.env.CONSUMER_DB ?? "webhook-events.db",
    process: async (event) => console.log(`${event.type} ${event.event_id}`),
  });
  createServer((req, res) => void consumer.handle(req, res)).listen(Number(process.env.PORT ?? 8090), () =>
    console.log(`listening on ${process.env.PORT ?? 8090}`),
  );
}
