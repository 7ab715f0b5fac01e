// The results as a plain-text table (also valid Markdown) and the targets as PASS/FAIL lines.

export const THROUGHPUT_TARGET = 0.7; // service req/s at least this share of the baseline's
export const DEEP_PAGE_TARGET = 1.5; // deep page p99 at most this multiple of the first page's

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");

export function markdownTable(header, rows) {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(" | ")} |`;
  const rule = `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

export function resultsTable(results) {
  const header = [
    "Case",
    "Service req/s",
    "Baseline req/s",
    "req/s ratio",
    "Service p99 ms",
    "Baseline p99 ms",
    "p99 ratio",
    "Service p50 ms",
    "Baseline p50 ms",
  ];
  const rows = results.map(({ name, service, baseline }) => [
    name,
    fixed(service.requestsPerSecond, 0),
    fixed(baseline.requestsPerSecond, 0),
    fixed(service.requestsPerSecond / baseline.requestsPerSecond, 2),
    fixed(service.p99Ms, 2),
    fixed(baseline.p99Ms, 2),
    fixed(service.p99Ms / baseline.p99Ms, 2),
    fixed(service.p50Ms, 2),
    fixed(baseline.p50Ms, 2),
  ]);
  return markdownTable(header, rows);
}

const verdict = (pass) => (pass ? "PASS" : "FAIL");

/** One line per target; `pass` is false for a target that was missed or could not be measured cleanly. */
export function targetLines(results, { firstPage, deepPage }) {
  const lines = results.map(({ name, service, baseline }) => {
    const ratio = service.requestsPerSecond / baseline.requestsPerSecond;
    return {
      pass: ratio >= THROUGHPUT_TARGET && isClean(service) && isClean(baseline),
      text: `${name}: service req/s = ${fixed(ratio, 2)} x baseline (target >= ${THROUGHPUT_TARGET})`,
    };
  });
  const first = results.find((result) => result.name === firstPage);
  const deep = results.find((result) => result.name === deepPage);
  if (first && deep) {
    const ratio = deep.service.p99Ms / first.service.p99Ms;
    const baselineRatio = deep.baseline.p99Ms / first.baseline.p99Ms;
    lines.push({
      pass: ratio <= DEEP_PAGE_TARGET,
      text:
        `Deep page p99 / first page p99 (service) = ${fixed(ratio, 2)} (target <= ${DEEP_PAGE_TARGET}; ` +
        `baseline: ${fixed(baselineRatio, 2)})`,
    });
  }
  return lines.map(({ pass, text }) => `${verdict(pass)}  ${text}`);
}

function isClean(measurement) {
  return measurement.unexpectedStatus === 0 && measurement.errors === 0;
}

/** Warnings for measurements that include failed requests: their numbers do not mean what they say. */
export function problemLines(results) {
  const lines = [];
  for (const { name, service, baseline } of results) {
    for (const [target, measurement] of [
      ["service", service],
      ["baseline", baseline],
    ]) {
      if (!isClean(measurement)) {
        lines.push(
          `WARNING ${name} (${target}): ${measurement.unexpectedStatus} unexpected statuses, ${measurement.errors} errors/timeouts`,
        );
      }
    }
  }
  return lines;
}
