import { parseArgs } from "node:util";
import { ApiKeyRequestError, issueApiKey } from "../../server/auth/issue-api-key.js";
import { systemClock } from "../../server/clock.js";
import { randomBytes } from "node:crypto";
import { readConfig, type Config } from "../../server/config.js";
import { keyFileOf, promoteStagedKey, stageKey } from "../../server/secrets/encryption-key.js";
import { KEY_BYTES, makeSealer, parseEncryptionKey } from "../../server/secrets/sealer.js";
import { ConfigError, coerceError } from "../../server/errors.js";
import { makeIdGenerator } from "../../server/ids.js";
import { openStore, type Store } from "../../server/store/index.js";
import { openPostgresStore } from "../../server/store/open-postgres-store.js";
import { PAGE_LINK_SECRET, newPageLinkSecret } from "../../server/pages/page-links.js";
import { parseDuration } from "../../server/contract/duration.js";
import { OPERATOR_HELP } from "./operator-help.js";

class UsageError extends Error {}

type Options = { admin?: boolean; project?: string; scopes?: string; name?: string; "expires-in"?: string };

/** `90d`, `15m`, `3s` → milliseconds. */
function durationOf(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) {
    throw new UsageError(`--expires-in takes a number and a unit (s, m, h, d), e.g. 90d; not '${text}'.`);
  }
  return ms;
}

/** The audit event of a CLI command, written in the command's own transaction. */
function auditEvent(
  action: string,
  resource: { resource_id: string | null; project_id: string | null; key_id?: string | null },
) {
  const now = systemClock.now();
  return {
    audit_event_id: makeIdGenerator(systemClock)("auditEvent"),
    created_at: now.toISOString(),
    actor_type: "cli" as const,
    actor_key_id: resource.key_id ?? null,
    actor_label: `assure ${action.replace(".", " ")}`,
    action,
    resource_id: resource.resource_id,
    project_id: resource.project_id,
    request_id: null,
    client_address: null,
  };
}

async function createKey(store: Store, options: Options) {
  if (Boolean(options.admin) === Boolean(options.project)) {
    throw new UsageError("Pass either --admin or --project <id>.");
  }
  const scopes = (options.scopes ?? "")
    .split(",")
    .map((scope) => scope.trim())
    .filter(Boolean);
  const expiresIn = options["expires-in"] === undefined ? undefined : durationOf(options["expires-in"]);
  const expiresAt =
    expiresIn === undefined ? undefined : new Date(systemClock.now().getTime() + expiresIn).toISOString();
  const key = await store.transaction(async () => {
    const issued = await issueApiKey(
      { store, clock: systemClock, newId: makeIdGenerator(systemClock) },
      { projectId: options.project ?? null, scopes, name: options.name, expiresAt },
    );
    await store.appendAuditEvent(
      auditEvent("keys.create", { resource_id: issued.key_id, project_id: issued.project_id, key_id: issued.key_id }),
    );
    return issued;
  });
  return { ...key, note: "The token is shown once; store it now." };
}

async function revokeKey(store: Store, keyId: string | undefined) {
  if (!keyId) throw new UsageError("Name the key_id to revoke.");
  const key = await store.getApiKeyRow(keyId);
  if (!key) throw new UsageError(`Key '${keyId}' does not exist.`);
  const revokedNow = await store.transaction(async () => {
    const revoked = await store.revokeApiKey(keyId, systemClock.now().toISOString());
    if (revoked) {
      await store.appendAuditEvent(
        auditEvent("keys.revoke", {
          resource_id: keyId,
          project_id: key.project_id,
          key_id: keyId,
        }),
      );
    }
    return revoked;
  });
  return { key_id: keyId, revoked: true, already_revoked: !revokedNow };
}

/**
 * Seals every secret again under a new key, in one transaction. With ASSURE_ENCRYPTION_KEY, the new
 * key is ASSURE_NEW_ENCRYPTION_KEY and the operator sets it as ASSURE_ENCRYPTION_KEY afterwards; with
 * the key file, a new key is drawn, staged beside it, and promoted once the secrets are committed.
 */
async function rotateKey(store: Store, config: Config) {
  const configured = config.encryptionKey !== undefined;
  let next: Buffer;
  if (configured) {
    const given = process.env.ASSURE_NEW_ENCRYPTION_KEY;
    const parsed = given === undefined ? undefined : parseEncryptionKey(given);
    if (!parsed) {
      throw new UsageError(
        "ASSURE_ENCRYPTION_KEY is set: give the new key as ASSURE_NEW_ENCRYPTION_KEY (32 bytes in base64 or hex: openssl rand -base64 32).",
      );
    }
    next = parsed;
  } else {
    next = randomBytes(KEY_BYTES);
    stageKey(config.dbPath, next);
  }
  const to = makeSealer(next);
  if (to.keyId === store.encryptionKeyId) throw new UsageError("The new key is the current one.");
  const from = store.encryptionKeyId;
  const resealed = await store.transaction(async () => {
    const count = await store.resealSecrets(to);
    await store.appendAuditEvent(auditEvent("secrets.rotate-key", { resource_id: to.keyId, project_id: null }));
    return count;
  });
  store.scrubFreePages();
  if (!configured) promoteStagedKey(config.dbPath);
  return {
    rotated: { from_key_id: from, to_key_id: to.keyId },
    resealed,
    note: configured
      ? "Set ASSURE_ENCRYPTION_KEY to the new key (ASSURE_NEW_ENCRYPTION_KEY) before starting the service: the old key no longer opens the database."
      : `The key file ${keyFileOf(config.dbPath)} holds the new key; back it up. The old key no longer opens the database.`,
  };
}

async function run(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      admin: { type: "boolean" },
      project: { type: "string" },
      scopes: { type: "string" },
      name: { type: "string" },
      "expires-in": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [group, command, ...rest] = positionals;
  if (values.help) throw new UsageError("");
  const known =
    (group === "keys" && ["create", "list", "revoke"].includes(command ?? "")) ||
    (group === "pages" && command === "rotate-link-secret") ||
    (group === "secrets" && command === "rotate-key");
  if (!known) throw new UsageError("Unknown command.");
  const config = readConfig();
  const store = config.databaseUrl
    ? await openPostgresStore(config.databaseUrl, {
        clock: systemClock,
        encryptionKey: config.encryptionKey!,
        maxConnections: 2,
      })
    : await openStore(config.dbPath, { clock: systemClock, encryptionKey: config.encryptionKey });
  try {
    if (group === "secrets") return await rotateKey(store, config);
    if (group === "pages") {
      // The service reads the key each time it checks a link: every link signed before stops opening at once.
      await store.transaction(async () => {
        await store.putSecretSetting(PAGE_LINK_SECRET, newPageLinkSecret());
        await store.appendAuditEvent(
          auditEvent("pages.rotate-link-secret", { resource_id: PAGE_LINK_SECRET, project_id: null }),
        );
      });
      return {
        rotated: PAGE_LINK_SECRET,
        note: "Every page link signed before no longer opens; links minted from now on do.",
      };
    }
    if (command === "create") return await createKey(store, values);
    if (command === "list") return await store.listApiKeys();
    return await revokeKey(store, rest[0]);
  } finally {
    await store.close();
  }
}

/**
 * The operator's commands (keys, pages, secrets) on the service's database at ASSURE_DB: JSON on
 * stdout; a bad request exits 2 with the reason and the usage on stderr, anything else 1.
 */
export async function runOperatorCommand(argv: string[]): Promise<number> {
  try {
    console.log(JSON.stringify(await run(argv), null, 2));
    return 0;
  } catch (raw) {
    const error = coerceError(raw);
    const isUsage = error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    if (isUsage || error instanceof ApiKeyRequestError || error instanceof ConfigError) {
      if (error.message) console.error(error.message);
      if (isUsage) console.error(OPERATOR_HELP);
      return 2;
    }
    console.error(error);
    return 1;
  }
}
