import { SCOPES } from "../../server/auth/scopes.js";

/** The operator's commands: keys, page links and the encryption key of the service's database. */
export const OPERATOR_HELP = `Usage:
  assure keys create --admin [--name <label>] [--expires-in <duration>]
  assure keys create --project <project_id> --scopes <scope,scope,...> [--name <label>] [--expires-in <duration>]
  assure keys list
  assure keys revoke <key_id>
  assure pages rotate-link-secret     (revokes every signed link to a run's or a decision's page)
  assure secrets rotate-key           (seals every secret again under a new key; stop the service first)

A duration is a number and a unit: 3s, 15m, 12h, 90d.
Every command that writes appends an event to the audit trail (GET /v1/audit-events).
Uses the database at ASSURE_DB (default ./data/assure.db) and prints JSON; a bad request exits 2.
Scopes: ${SCOPES.join(", ")}`;

/** `assure db copy`: a SQLite database into an empty PostgreSQL database. */
export const DB_HELP = `Usage:
  assure db copy --from <sqlite file> --to postgres://user:password@host:port/database

Copies the service's SQLite database (default: ASSURE_DB, else ./data/assure.db) into an EMPTY
PostgreSQL database: creates the schema, then copies every table in one transaction, and checks
each table's row count and checksum on both sides before committing. Stop the service first.

The SQLite database must be at this version's schema (start this version of assure on it once).
Secrets are copied sealed as they are: the key is ASSURE_ENCRYPTION_KEY, else the key file beside
the SQLite database, and the service on PostgreSQL needs ASSURE_ENCRYPTION_KEY set to that key.

Prints JSON (tables, rows, checksums, the key's id, the time taken). Exits 2 when it refuses
(a bad command line, a target that is not empty, a source at another schema version, a key
that does not open the source's secrets), 1 when the copy failed (the target is left empty).`;
