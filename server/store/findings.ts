import type { Db } from "./db.js";

export interface FindingRow {
  finding_id: string;
  run_id: string;
  /** The spec's security probe id, or `detector.<name>` for a built-in detector. */
  probe_id: string;
  category: string;
  owasp: string;
  severity: "critical" | "high" | "medium" | "low" | "info";
  /** 4 for critical down to 0 for info: lets SQL filter "at least high". */
  severity_rank: number;
  title: string;
  description: string;
  status: "open";
  spec_path: string | null;
  evidence_refs: string;
  created_at: string;
}

export function makeFindingsStore(db: Db) {
  const insert =
    db.prepare(`INSERT INTO findings (finding_id, run_id, probe_id, category, owasp, severity, severity_rank,
      title, description, status, spec_path, evidence_refs, created_at)
    VALUES (@finding_id, @run_id, @probe_id, @category, @owasp, @severity, @severity_rank, @title, @description, @status,
      @spec_path, @evidence_refs, @created_at)`);
  const byId = db.prepare("SELECT * FROM findings WHERE run_id = ? AND finding_id = ?");
  const page = db.prepare(`SELECT * FROM findings WHERE run_id = @run_id AND (@after IS NULL OR finding_id > @after)
      AND (@severity IS NULL OR severity = @severity) AND (@status IS NULL OR status = @status)
    ORDER BY finding_id LIMIT @limit`);
  const all = db.prepare("SELECT * FROM findings WHERE run_id = ? ORDER BY severity_rank DESC, finding_id");

  return {
    reads: {
      getFinding(runId: string, findingId: string): FindingRow | undefined {
        return byId.get(runId, findingId) as FindingRow | undefined;
      },
      listFindings(
        runId: string,
        filter: { severity?: string | undefined; status?: string | undefined },
        after: string | undefined,
        limit: number,
      ): FindingRow[] {
        return page.all({
          run_id: runId,
          after: after ?? null,
          severity: filter.severity ?? null,
          status: filter.status ?? null,
          limit,
        }) as FindingRow[];
      },
      /** Every finding of a run, most severe first: what the evidence document shows. */
      listRunFindings(runId: string): FindingRow[] {
        return all.all(runId) as FindingRow[];
      },
    },
    writes: {
      insertFindings(rows: readonly FindingRow[]): void {
        for (const row of rows) insert.run(row);
      },
    },
  };
}
