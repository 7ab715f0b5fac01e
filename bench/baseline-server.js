// The baseline the service is measured against: bare node:http + better-sqlite3 doing, per
// request, the same SQL as the service (statements copied from server/store/*.ts) and writing
// the same JSON with JSON.stringify. No framework, no schema validation, no logging.
// Run as a child process: PORT, HOST and ASSURE_DB come from the environment.
import { createDecipheriv, createHash, createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import Database from "better-sqlite3";

const BODY_LIMIT = 1024 * 1024;
const BEARER = /^Bearer ([^\s]+)$/i;
const TOKEN_PATTERN = /^assure_([0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;
const RUN_PATH = /^\/v1\/runs\/([^/]+)$/;
const EVIDENCE_PATH = /^\/v1\/runs\/([^/]+)\/evidence$/;
/** The cursor scope the service gives an unfiltered run list (server/http/routes/runs.ts). */
const RUN_LIST_SCOPE = "runs|||";

class HttpError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function openDatabase(path) {
  const db = new Database(path, { fileMustExist: true });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  return db;
}

function prepareStatements(db) {
  return {
    apiKeyById: db.prepare("SELECT * FROM api_keys WHERE key_id = ?"),
    runById: db.prepare("SELECT * FROM runs WHERE run_id = ?"),
    environmentById: db.prepare("SELECT * FROM environments WHERE environment_id = ?"),
    gatesOfRun: db.prepare("SELECT * FROM gate_results WHERE run_id = ? ORDER BY position"),
    evaluationCounts: db.prepare("SELECT status, COUNT(*) AS n FROM evaluations WHERE run_id = ? GROUP BY status"),
    findingsOfRun: db.prepare("SELECT * FROM findings WHERE run_id = ? ORDER BY severity_rank DESC, finding_id"),
    latestTestSpec: db.prepare(`SELECT s.test_spec_id, s.project_id, v.spec_version
      FROM test_specs s JOIN test_spec_versions v ON v.test_spec_id = s.test_spec_id
      WHERE s.test_spec_id = ?
        AND v.version_number = (SELECT MAX(version_number) FROM test_spec_versions WHERE test_spec_id = s.test_spec_id)`),
    idempotencyKey: db.prepare(
      "SELECT request_hash, run_id, expires_at FROM idempotency_keys WHERE project_id = ? AND idempotency_key = ?",
    ),
    firstRunPage: db.prepare("SELECT * FROM runs ORDER BY created_at DESC, run_id DESC LIMIT ?"),
    runPageAfter: db.prepare(
      "SELECT * FROM runs WHERE (created_at, run_id) < (?, ?) ORDER BY created_at DESC, run_id DESC LIMIT ?",
    ),
  };
}

const db = openDatabase(process.env.ASSURE_DB);
const sql = prepareStatements(db);
const cursorSecret = Buffer.from(
  unseal(db.prepare("SELECT value FROM settings WHERE key = 'cursor_secret'").pluck().get(), "settings/cursor_secret"),
  "base64",
);

/**
 * As server/secrets/sealer.ts opens a sealed value (`v1.<key id>.<nonce>.<ciphertext>.<tag>`,
 * AES-256-GCM, its place as associated data) with the key file beside the database, as
 * server/secrets/encryption-key.ts finds it when ASSURE_ENCRYPTION_KEY is not set.
 */
function unseal(sealed, context) {
  const key = Buffer.from(readFileSync(`${process.env.ASSURE_DB}.key`, "utf8").trim(), "base64");
  const [, , nonce, ciphertext, tag] = sealed.split(".").map((part) => Buffer.from(part, "base64url"));
  const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: 16 });
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
}

// --- authentication: as server/auth/authenticate.ts ---

function authenticate(authorization) {
  const bearer = authorization ? BEARER.exec(authorization) : null;
  const token = bearer ? TOKEN_PATTERN.exec(bearer[1]) : null;
  if (!token) throw new HttpError(401, "UNAUTHENTICATED", "Send an API key as 'Authorization: Bearer <token>'.");
  const row = sql.apiKeyById.get(`key_${token[1]}`);
  const given = createHash("sha256").update(token[2]).digest();
  const matches = row && given.length === row.secret_hash.length && timingSafeEqual(given, row.secret_hash);
  if (!matches || row.revoked_at !== null) {
    throw new HttpError(401, "UNAUTHENTICATED", "The API key is unknown or revoked.");
  }
  return { key_id: row.key_id, project_id: row.project_id };
}

function visibleOr404(principal, resource, what, id) {
  if (!resource || (principal.project_id !== null && principal.project_id !== resource.project_id)) {
    throw new HttpError(404, "NOT_FOUND", `${what} '${id}' was not found.`);
  }
  return resource;
}

// --- the same documents as server/store/runs.ts toRun and server/runs/build-evidence.ts ---

function toRun(row) {
  return {
    run_id: row.run_id,
    project_id: row.project_id,
    status: row.status,
    verdict: row.verdict,
    failure: row.failure_cause ? { cause: row.failure_cause, message: row.failure_message ?? "" } : null,
    test_spec_id: row.test_spec_id,
    spec_version: row.spec_version,
    environment_id: row.environment_id,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    agent_url: row.agent_url,
    source: row.source ? JSON.parse(row.source) : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
    started_at: row.started_at,
    ended_at: row.ended_at,
    links: {
      self: `/v1/runs/${row.run_id}`,
      evidence: `/v1/runs/${row.run_id}/evidence`,
      conversations: `/v1/runs/${row.run_id}/conversations`,
      trace: `/v1/runs/${row.run_id}/trace`,
      evaluations: `/v1/runs/${row.run_id}/evaluations`,
      findings: `/v1/runs/${row.run_id}/findings`,
    },
  };
}

function toEvidence(run, environmentName, agentUsage) {
  const counts = { passed: 0, failed: 0, inconclusive: 0, errored: 0 };
  for (const { status, n } of sql.evaluationCounts.all(run.run_id)) counts[status] = n;
  const total = counts.passed + counts.failed + counts.inconclusive + counts.errored;
  return {
    evidence_version: "1",
    run_id: run.run_id,
    project_id: run.project_id,
    test_spec_id: run.test_spec_id,
    spec_version: run.spec_version,
    agent_id: run.agent_id,
    agent_version: run.agent_version,
    environment: environmentName,
    environment_id: run.environment_id,
    status: run.status,
    verdict: run.verdict,
    failure: run.failure,
    decided_at: run.verdict === "PENDING" ? null : run.ended_at,
    gates: sql.gatesOfRun.all(run.run_id).map((row) => ({
      id: row.gate_id,
      title: row.title,
      status: row.status,
      reason: row.reason,
      evidence_refs: JSON.parse(row.evidence_refs),
    })),
    evaluations: { total, ...counts },
    usage: agentUsage ? JSON.parse(agentUsage) : null,
    findings: sql.findingsOfRun.all(run.run_id).map((row) => ({
      finding_id: row.finding_id,
      run_id: row.run_id,
      probe_id: row.probe_id,
      category: row.category,
      owasp: row.owasp,
      severity: row.severity,
      title: row.title,
      description: row.description,
      status: row.status,
      spec_path: row.spec_path,
      evidence_refs: JSON.parse(row.evidence_refs),
      created_at: row.created_at,
    })),
    links: {
      run: `/v1/runs/${run.run_id}`,
      self: `/v1/runs/${run.run_id}/evidence`,
      conversations: `/v1/runs/${run.run_id}/conversations`,
      trace: `/v1/runs/${run.run_id}/trace`,
      evaluations: `/v1/runs/${run.run_id}/evaluations`,
      findings: `/v1/runs/${run.run_id}/findings`,
    },
  };
}

// --- cursors: the service's format and secret, so one cursor works against both servers ---

const signCursor = (payload) => createHmac("sha256", cursorSecret).update(payload).digest().subarray(0, 16);

function encodeCursor(created_at, id) {
  const payload = Buffer.from(JSON.stringify([created_at, id, RUN_LIST_SCOPE])).toString("base64url");
  return `${payload}.${signCursor(payload).toString("base64url")}`;
}

function decodeCursor(cursor) {
  const invalid = () => new HttpError(400, "VALIDATION_FAILED", "The cursor is invalid.");
  const [payload, signature, extra] = cursor.split(".");
  if (!payload || !signature || extra !== undefined) throw invalid();
  const expected = signCursor(payload);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
  const [created_at, id, scope] = JSON.parse(Buffer.from(payload, "base64url").toString());
  if (scope !== RUN_LIST_SCOPE) throw invalid();
  return { created_at, id };
}

// --- request hash: as server/specs/canonical-json.ts contentAddress ---

function canonicalJson(value) {
  return JSON.stringify(value, (_key, inner) => {
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

const contentAddress = (value) => `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;

// --- handlers ---

function getRun(principal, runId) {
  const row = sql.runById.get(runId);
  return toRun(visibleOr404(principal, row, "Run", runId));
}

function getEvidence(principal, runId) {
  const row = visibleOr404(principal, sql.runById.get(runId), "Run", runId);
  const run = toRun(row);
  const environment = sql.environmentById.get(run.environment_id);
  return toEvidence(run, environment?.name ?? run.environment_id, row.agent_usage);
}

function listRuns(query) {
  const limit = Number(query.get("limit") ?? 50);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new HttpError(400, "VALIDATION_FAILED", "Bad limit.");
  const cursor = query.get("cursor");
  const after = cursor ? decodeCursor(cursor) : undefined;
  const rows = after ? sql.runPageAfter.all(after.created_at, after.id, limit + 1) : sql.firstRunPage.all(limit + 1);
  const hasMore = rows.length > limit;
  if (hasMore) rows.length = limit;
  const last = rows.at(-1);
  return {
    data: rows.map(toRun),
    next_cursor: hasMore ? encodeCursor(last.created_at, last.run_id) : null,
    has_more: hasMore,
  };
}

/** Only the replay path: the bench never asks the baseline to create a run. */
function replayRun(principal, body, idempotencyKey) {
  if (!idempotencyKey) throw new HttpError(400, "IDEMPOTENCY_KEY_REQUIRED", "Send an Idempotency-Key header.");
  const spec = visibleOr404(principal, sql.latestTestSpec.get(body.test_spec_id), "Test spec", body.test_spec_id);
  const environment = sql.environmentById.get(body.environment_id);
  if (!environment || environment.project_id !== spec.project_id) {
    throw new HttpError(404, "NOT_FOUND", `Environment '${body.environment_id}' was not found.`);
  }
  const key = sql.idempotencyKey.get(spec.project_id, idempotencyKey);
  if (!key || key.expires_at <= new Date().toISOString()) {
    throw new HttpError(501, "NOT_IMPLEMENTED", "The baseline only replays runs.");
  }
  if (key.request_hash !== contentAddress(body)) {
    throw new HttpError(422, "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different body.");
  }
  return toRun(sql.runById.get(key.run_id));
}

function readJsonBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > BODY_LIMIT) reject(new HttpError(413, "PAYLOAD_TOO_LARGE", "Body too large."));
      else chunks.push(chunk);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString()));
      } catch {
        reject(new HttpError(400, "MALFORMED_BODY", "The request body is not well-formed JSON."));
      }
    });
    req.on("error", reject);
  });
}

function sendJson(res, status, document, headers = {}) {
  const text = JSON.stringify(document);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function route(req, res) {
  const [path, search = ""] = req.url.split("?");
  if (req.method === "GET" && path === "/healthz") return sendJson(res, 200, { status: "ok" });
  const principal = authenticate(req.headers.authorization);
  if (req.method === "POST" && path === "/v1/runs") {
    const run = replayRun(principal, await readJsonBody(req), req.headers["idempotency-key"]);
    return sendJson(res, 200, run, { location: run.links.self, "idempotent-replayed": "true" });
  }
  if (req.method === "GET") {
    if (path === "/v1/runs") return sendJson(res, 200, listRuns(new URLSearchParams(search)));
    const evidence = EVIDENCE_PATH.exec(path);
    if (evidence) return sendJson(res, 200, getEvidence(principal, evidence[1]));
    const run = RUN_PATH.exec(path);
    if (run) return sendJson(res, 200, getRun(principal, run[1]));
  }
  throw new HttpError(404, "NOT_FOUND", `No endpoint at ${req.method} ${path}.`);
}

const server = createServer((req, res) => {
  route(req, res).catch((error) => {
    const status = error instanceof HttpError ? error.status : 500;
    if (status === 500) console.error(error);
    sendJson(res, status, { error: { code: error.code ?? "INTERNAL", message: error.message } });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), process.env.HOST ?? "127.0.0.1");

process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  db.close();
  process.exit(0);
});
