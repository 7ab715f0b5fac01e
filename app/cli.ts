import { parseArgs } from "node:util";
import { ApiKeyRequestError, issueApiKey } from "../server/auth/issue-api-key.js";
import { SCOPES } from "../server/auth/scopes.js";
import { systemClock } from "../server/clock.js";
import { readConfig } from "../server/config.js";
import { ConfigError, coerceError } from "../server/errors.js";
import { makeIdGenerator } from "../server/ids.js";
import { openStore, type Store } from "../server/store/index.js";
import { PAGE_LINK_SECRET, newPageLinkSecret } from "../server/pages/page-links.js";

const USAGE = `Usage:
  assure keys create --admin [--name <label>]
  assure keys create --project <project_id> --scopes <scope,scope,...> [--name <label>]
  assure keys list
  assure keys revoke <key_id>
  assure pages rotate-link-secret     (revokes every signed link to a run's or a decision's page)

Uses the database at ASSURE_DB (default ./data/assure.db) and prints JSON.
Scopes: ${SCOPES.join(", ")}`;

class UsageError extends Error {}

type Options = { admin?: boolean; project?: string; scopes?: string; name?: string };

function createKey(store: Store, options: Options) {
  if (Boolean(options.admin) === Boolean(options.project)) throw new UsageError("Pass either --admin or --project <id>.");
  const scopes = (options.scopes ?? "").split(",").map((scope) => scope.trim()).filter(Boolean);
  const key = issueApiKey(
    { store, clock: systemClock, newId: makeIdGenerator(systemClock) },
    { projectId: options.project ?? null, scopes, name: options.name },
  );
  return { ...key, note: "The token is shown once; store it now." };
}

function revokeKey(store: Store, keyId: string | undefined) {
  if (!keyId) throw new UsageError("Name the key_id to revoke.");
  if (!store.getApiKeyRow(keyId)) throw new UsageError(`Key '${keyId}' does not exist.`);
  const revokedNow = store.revokeApiKey(keyId, systemClock.now().toISOString());
  return { key_id: keyId, revoked: true, already_revoked: !revokedNow };
}

function run(argv: string[]): unknown {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      admin: { type: "boolean" },
      project: { type: "string" },
      scopes: { type: "string" },
      name: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [group, command, ...rest] = positionals;
  if (values.help) throw new UsageError("");
  const known = (group === "keys" && ["create", "list", "revoke"].includes(command ?? "")) || (group === "pages" && command === "rotate-link-secret");
  if (!known) throw new UsageError("Unknown command.");
  const config = readConfig();
  const store = openStore(config.dbPath, { clock: systemClock, encryptionKey: config.encryptionKey });
  try {
    if (group === "pages") {
      // The service reads the key each time it checks a link: every link signed before stops opening at once.
      store.putSecretSetting(PAGE_LINK_SECRET, newPageLinkSecret());
      return { rotated: PAGE_LINK_SECRET, note: "Every page link signed before no longer opens; links minted from now on do." };
    }
    if (command === "create") return createKey(store, values);
    if (command === "list") return store.listApiKeys();
    return revokeKey(store, rest[0]);
  } finally {
    store.close();
  }
}

try {
  console.log(JSON.stringify(run(process.argv.slice(2)), null, 2));
} catch (raw) {
  const error = coerceError(raw);
  const isUsage = error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
  if (isUsage || error instanceof ApiKeyRequestError || error instanceof ConfigError) {
    if (error.message) console.error(error.message);
    if (isUsage) console.error(USAGE);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
}
