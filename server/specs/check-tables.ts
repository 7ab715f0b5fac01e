import { Scenario, type TestSpecDocument } from "./document-shape.js";
import { fillScenario } from "./scenario-cases.js";
import { TEMPLATED_SCENARIO_FIELDS, placeholdersIn, rowKey } from "./vars.js";

export type Path = (string | number)[];

/** Row problems reported per table; a table with more says how many more. */
const MAX_ROW_PROBLEMS = 20;
const ROW_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const formatPath = (path: readonly PropertyKey[]) =>
  path.reduce<string>(
    (out, part) => (typeof part === "number" ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)),
    "",
  );

/**
 * A scenario's table: every `{{name}}` it uses is a column, each row has a value for it, row
 * keys are unique, and the scenario each row fills in is a valid scenario (a value that is
 * exactly `{{name}}` takes the row's type, which must fit where it goes).
 */
export function checkTable(scenario: Scenario, at: Path, problem: (path: Path, message: string) => void): void {
  if (scenario.vars === undefined) {
    if (scenario.vars_file !== undefined) {
      problem(
        [...at, "vars_file"],
        "the table is read from the repository by the App and the Action, which upload it with the spec; to upload the spec yourself, send it with its tables ({file: {…, tables}}) or inline the rows as vars",
      );
    }
    return;
  }
  const rows = scenario.vars;
  const { vars: _table, ...template } = scenario;
  const used = placeholdersIn(TEMPLATED_SCENARIO_FIELDS.map((field) => scenario[field]));
  const columns = new Set(rows.flatMap((row) => Object.keys(row)));
  for (const name of used) {
    if (!columns.has(name)) {
      problem([...at, "vars"], `unknown {{${name}}}: no row of this scenario's vars has a column '${name}'`);
    }
  }
  let reported = 0;
  const rowProblem = (r: number, path: Path, message: string) => {
    if (++reported <= MAX_ROW_PROBLEMS) problem([...at, "vars", r, ...path], `row ${r + 1}: ${message}`);
  };
  const keys = new Map<string, number>();
  rows.forEach((row, r) => {
    const key = rowKey(row, r);
    if (row.id !== undefined && !ROW_ID.test(key)) {
      rowProblem(r, ["id"], "an id is a string or number of letters, digits, '.', '_', ':' and '-' (at most 64)");
    }
    const earlier = keys.get(key);
    if (earlier !== undefined) {
      rowProblem(r, ["id"], `its key '${key}' is row ${earlier + 1}'s too: give every row a unique id`);
    } else keys.set(key, r);
    const missing = [...used].filter((name) => columns.has(name) && !Object.hasOwn(row, name));
    if (missing.length > 0) {
      rowProblem(
        r,
        [missing[0]!],
        `no value for column '${missing[0]}'${missing.length > 1 ? ` (nor ${missing.slice(1).join(", ")})` : ""}`,
      );
      return;
    }
    if (used.size === 0) return;
    const filled = Scenario.safeParse(fillScenario(template, row));
    if (!filled.success) {
      const issue = filled.error.issues[0]!;
      rowProblem(r, [], `filled in, ${formatPath(issue.path)}: ${issue.message}`);
    }
  });
  if (reported > MAX_ROW_PROBLEMS) {
    problem([...at, "vars"], `${reported - MAX_ROW_PROBLEMS} more row problems not shown`);
  }
}

/** `{{name}}` in the tools' mocks is filled from the row a conversation plays: it must be a column of some scenario's table. */
export function checkTemplatedMocks(doc: TestSpecDocument, problem: (path: Path, message: string) => void): void {
  const tables = (doc.scenarios ?? []).flatMap((scenario) => scenario.vars ?? []);
  if (tables.length === 0) return; // without tables, {{…}} in a mock is just text
  const columns = new Set(tables.flatMap((row) => Object.keys(row)));
  (doc.tools ?? []).forEach((tool, i) => {
    for (const name of placeholdersIn(tool.mock)) {
      if (!columns.has(name)) {
        problem(["tools", i, "mock"], `unknown {{${name}}}: no scenario's vars has a column '${name}'`);
      }
    }
  });
}
