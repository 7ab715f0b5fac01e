import { SEVERITIES, type Severity } from "./severity.js";

/** How severe a finding is, as a number that sorts: info 0 … critical 4. */
export const SEVERITY_RANK = Object.fromEntries(
  SEVERITIES.map((severity, i) => [severity, SEVERITIES.length - 1 - i]),
) as Readonly<Record<Severity, number>>;
