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
