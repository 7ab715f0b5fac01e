import type { Sealer } from "../../secrets/sealer.js";
import type { Db } from "../db.js";
import init from "./0001-init.js";
import engine from "./0002-engine.js";
import findings from "./0003-findings.js";
import evaluationKinds from "./0004-evaluation-kinds.js";
import specSourceLines from "./0005-spec-source-lines.js";
import projectRepositories from "./0006-project-repositories.js";
import specSources from "./0007-spec-sources.js";
import releaseDecisions from "./0008-release-decisions.js";
import github from "./0009-github.js";
import sealedSecrets from "./0010-sealed-secrets.js";
import agentUrls from "./0011-agent-urls.js";
import waitsAndDeployments from "./0012-waits-and-deployments.js";
import commitVersions from "./0013-commit-versions.js";
import forks from "./0014-forks.js";
import shortLivedKeys from "./0015-short-lived-keys.js";
import agentPace from "./0016-agent-pace.js";
import specFiles from "./0017-spec-files.js";
import agentUsage from "./0018-agent-usage.js";
import changeAgainstBase from "./0019-change-against-base.js";
import retries from "./0020-retries.js";
import pricing from "./0021-pricing.js";
import pages from "./0022-pages.js";
import webhooks from "./0023-webhooks.js";
import auditTrail from "./0024-audit-trail.js";
import plannedBy from "./0025-planned-by.js";
import oidcSignIn from "./0026-oidc-sign-in.js";
import deliveryBodies from "./0027-delivery-bodies.js";
import fairClaims from "./0028-fair-claims.js";
import webhookFairness from "./0029-webhook-fairness.js";
import approvedPolicy from "./0030-approved-policy.js";
import httpEndpoints from "./0031-http-endpoints.js";
import traceWait from "./0032-trace-wait.js";
import uploadedRuns from "./0033-uploaded-runs.js";
import findingDetails, { postgres as findingDetailsPostgres } from "./0034-finding-details.js";

export interface MigrationContext {
  sealer: Sealer;
}

export interface Migration {
  version: number;
  name: string;
  /** Schema changes, run first. */
  sql?: string;
  /** Data changes SQL cannot make alone (sealing values), in the same transaction. */
  run?(db: Db, context: MigrationContext): void;
  /** The migration overwrote values that must not survive in free pages or the WAL: VACUUM after it. */
  scrub?: boolean;
  /** The same change on PostgreSQL (migrations after its baseline, 33, carry one): SQL run in the migration's transaction. */
  postgres?: string;
}

/** Append-only: never edit a migration that has shipped; add the next number. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "init", sql: init },
  { version: 2, name: "engine", sql: engine },
  { version: 3, name: "findings", sql: findings },
  { version: 4, name: "evaluation-kinds", sql: evaluationKinds },
  { version: 5, name: "spec-source-lines", sql: specSourceLines },
  { version: 6, name: "project-repositories", sql: projectRepositories },
  { version: 7, name: "spec-sources", sql: specSources },
  { version: 8, name: "release-decisions", sql: releaseDecisions },
  { version: 9, name: "github", sql: github },
  sealedSecrets,
  { version: 11, name: "agent-urls", sql: agentUrls },
  { version: 12, name: "waits-and-deployments", sql: waitsAndDeployments },
  { version: 13, name: "commit-versions", sql: commitVersions },
  { version: 14, name: "forks", sql: forks },
  { version: 15, name: "short-lived-keys", sql: shortLivedKeys },
  { version: 16, name: "agent-pace", sql: agentPace },
  { version: 17, name: "spec-files", sql: specFiles },
  { version: 18, name: "agent-usage", sql: agentUsage },
  { version: 19, name: "change-against-base", sql: changeAgainstBase },
  { version: 20, name: "retries", sql: retries },
  { version: 21, name: "pricing", sql: pricing },
  { version: 22, name: "pages", sql: pages },
  { version: 23, name: "webhooks", sql: webhooks },
  { version: 24, name: "audit-trail", sql: auditTrail },
  { version: 25, name: "planned-by", sql: plannedBy },
  { version: 26, name: "oidc-sign-in", sql: oidcSignIn },
  { version: 27, name: "delivery-bodies", sql: deliveryBodies },
  { version: 28, name: "fair-claims", sql: fairClaims },
  { version: 29, name: "webhook-fairness", sql: webhookFairness },
  { version: 30, name: "approved-policy", sql: approvedPolicy },
  { version: 31, name: "http-endpoints", sql: httpEndpoints },
  { version: 32, name: "trace-wait", sql: traceWait },
  { version: 33, name: "uploaded-runs", sql: uploadedRuns },
  { version: 34, name: "finding-details", sql: findingDetails, postgres: findingDetailsPostgres },
];

/** The schema version this build migrates to. */
export const LATEST_MIGRATION = MIGRATIONS.at(-1)!.version;
