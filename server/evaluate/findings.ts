import type { ProbeCategory, Severity } from "../contract/index.js";

/** A finding before it is stored: what tripped, how bad it is, and the trace entries that show it. */
export interface FindingDraft {
  probe_id: string;
  category: ProbeCategory;
  owasp: string;
  severity: Severity;
  title: string;
  description: string;
  spec_path: string | null;
  evidence_refs: string[];
}

/** At most this many refs per finding; the description says how many there were. */
export const MAX_FINDING_REFS = 50;
