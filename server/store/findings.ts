import type { Finding } from "../contract/index.js";
import { SEVERITY_RANK } from "../specs/severity-rank.js";
import type { Sql } from "./sql/sql.js";

/** What a finding names beside its category (its OWASP and ATLAS ids, how it was found, the attack), stored as one JSON column. */
const DETAILS = ["owasp_llm", "owasp_asi", "atlas", "detection", "attack"] as const;
type FindingDetails = Pick<Finding, (typeof DETAILS)[number]>;

/** A finding as stored: its evidence refs and details as JSON, its severity also as a rank SQL can sort and filter on. */
type FindingRow = Omit<Finding, "evidence_refs" | (typeof DETAILS)[number]> & {
  evidence_refs: string;
  severity_rank: number;
  details: string | null;
};

const detailsOf = (finding: Finding): string | null => {
  const details = Object.fromEntries(
    DETAILS.filter((key) => finding[key] !== undefined).map((key) => [key, finding[key]]),
  );
  return Object.keys(details).length > 0 ? JSON.stringify(details) : null;
};

const toFinding = (row: FindingRow): Finding => ({
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
  evidence_refs: JSON.parse(row.evidence_refs) as string[],
  created_at: row.created_at,
  ...(row.details ? (JSON.parse(row.details) as FindingDetails) : {}),
});

export function makeFindingsStore(db: Sql) {
  const insert =
    db.prepare(`INSERT INTO findings (finding_id, run_id, probe_id, category, owasp, severity, severity_rank,
      title, description, status, spec_path, evidence_refs, created_at, details)
    VALUES (@finding_id, @run_id, @probe_id, @category, @owasp, @severity, @severity_rank, @title, @description, @status,
      @spec_path, @evidence_refs, @created_at, @details)`);
  const byId = db.prepare("SELECT * FROM findings WHERE run_id = ? AND finding_id = ?");
  const page =
    db.prepare(`SELECT * FROM findings WHERE run_id = @run_id AND (CAST(@after AS TEXT) IS NULL OR finding_id > @after)
      AND (CAST(@severity AS TEXT) IS NULL OR severity = @severity) AND (CAST(@status AS TEXT) IS NULL OR status = @status)
    ORDER BY finding_id LIMIT @limit`);
  const all = db.prepare("SELECT * FROM findings WHERE run_id = ? ORDER BY severity_rank DESC, finding_id");

  return {
    reads: {
      async getFinding(runId: string, findingId: string): Promise<Finding | undefined> {
        const row = await byId.get<FindingRow>(runId, findingId);
        return row && toFinding(row);
      },
      async listFindings(
        runId: string,
        filter: { severity?: string | undefined; status?: string | undefined },
        after: string | undefined,
        limit: number,
      ): Promise<Finding[]> {
        const rows = await page.all<FindingRow>({
          run_id: runId,
          after: after ?? null,
          severity: filter.severity ?? null,
          status: filter.status ?? null,
          limit,
        });
        return rows.map(toFinding);
      },
      /** Every finding of a run, most severe first: what the evidence document shows. */
      async listRunFindings(runId: string): Promise<Finding[]> {
        return (await all.all<FindingRow>(runId)).map(toFinding);
      },
    },
    writes: {
      async insertFindings(findings: readonly Finding[]): Promise<void> {
        for (const finding of findings) {
          const { owasp_llm: _l, owasp_asi: _a, atlas: _t, detection: _d, attack: _k, ...columns } = finding;
          await insert.run({
            ...columns,
            severity_rank: SEVERITY_RANK[finding.severity],
            evidence_refs: JSON.stringify(finding.evidence_refs),
            details: detailsOf(finding),
          });
        }
      },
    },
  };
}
