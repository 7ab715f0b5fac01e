import { readFileSync } from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { parse } from "yaml";
import { planConversations } from "../../../server/engine/plan.js";
import { gitBlobSha } from "../../../server/specs/canonical-json.js";
import { TestSpecDocument } from "../../../server/specs/document.js";
import { loadRepositorySpec } from "../../../server/specs/repository-spec.js";
import { readTable } from "../../../server/specs/tables.js";
import { fillPlaceholders } from "../../../server/specs/vars.js";

const TABLE_SPEC = readFileSync(new URL("../../../examples/tables/refunds-table.yaml", import.meta.url));

/** The example table spec with its rows given inline instead of in a file. */
function withRows(rows: unknown[], edit: (spec: any) => void = () => {}) {
  const spec = parse(TABLE_SPEC.toString("utf8"));
  delete spec.scenarios[0].vars_file;
  spec.scenarios[0].vars = rows;
  edit(spec);
  return spec;
}

function problemsOf(value: unknown): string[] {
  const parsed = TestSpecDocument.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

describe("filling placeholders", () => {
  const row = { order_id: "A-100", amount: 42.5, items: ["a", "b"] };

  it("keeps the row's JSON type when a value is exactly one placeholder, and writes it into longer text", () => {
    expect(
      fillPlaceholders(
        { amount: "{{amount}}", items: "{{ items }}", text: "Order {{order_id}}: {{amount}} for {{items}}" },
        row,
      ),
    ).toEqual({
      amount: 42.5,
      items: ["a", "b"],
      text: 'Order A-100: 42.5 for ["a","b"]',
    });
  });

  it("leaves a placeholder the row has no column for as it is", () => {
    expect(fillPlaceholders(["{{missing}}", "x {{missing}}"], row)).toEqual(["{{missing}}", "x {{missing}}"]);
  });
});

describe("a scenario with a table (vars)", () => {
  const rows = [
    { id: "A-100", order_id: "A-100", amount: 42.5 },
    { order_id: "B-7", amount: 10 },
  ];

  it("is one conversation per row and repeat, ids scenario[key], every {{name}} filled in the turns and the mocks", () => {
    const spec = TestSpecDocument.parse(withRows(rows, (s) => (s.scenarios[0].repeat = 2)));
    const plans = [...planConversations(spec)];
    expect(plans.map((p) => `${p.scenario_id}#${p.repeat_index}`)).toEqual([
      "refund[A-100]#1",
      "refund[A-100]#2",
      "refund[2]#1",
      "refund[2]#2",
    ]);
    expect(plans[2]!.turns[0]!.user).toBe("Order B-7 arrived broken. I want my money back.");
    expect(plans[2]!.tools[0]!.mock![0]).toEqual({
      when: { order_id: "B-7" },
      return: { order_id: "B-7", status: "delivered", amount: 10, currency: "EUR", notes: "" },
    });
  });

  it("is planned lazily: the plan is a generator that makes each conversation when asked", () => {
    const spec = TestSpecDocument.parse(
      withRows(Array.from({ length: 5000 }, (_, i) => ({ order_id: `A-${i}`, amount: i }))),
    );
    const plans = planConversations(spec);
    expect(typeof plans.next).toBe("function");
    expect(plans.next().value).toMatchObject({ scenario_id: "refund[1]" });
  });

  it("refuses a {{name}} no row has, naming it", () => {
    expect(problemsOf(withRows(rows, (s) => (s.scenarios[0].turns[0].user = "Order {{order}} please")))).toEqual([
      "scenarios.0.vars: unknown {{order}}: no row of this scenario's vars has a column 'order'",
    ]);
  });

  it("refuses a row without a value for a column the scenario uses, naming the row and the column", () => {
    expect(problemsOf(withRows([...rows, { order_id: "C-3" }]))).toEqual([
      "scenarios.0.vars.2.amount: row 3: no value for column 'amount'",
    ]);
  });

  it("refuses two rows with the same key", () => {
    expect(
      problemsOf(
        withRows([
          { id: "x", order_id: "A", amount: 1 },
          { id: "x", order_id: "B", amount: 2 },
        ]),
      ),
    ).toEqual(["scenarios.0.vars.1.id: row 2: its key 'x' is row 1's too: give every row a unique id"]);
  });

  it("refuses a row whose value does not fit where a whole {{name}} puts it", () => {
    const problems = problemsOf(
      withRows([{ order_id: "A-1", amount: 1, text: 7 }], (s) => (s.scenarios[0].system = "{{text}}")),
    );
    expect(problems).toEqual([expect.stringMatching(/^scenarios\.0\.vars\.0: row 1: filled in, system: /)]);
  });

  it("refuses {{name}} in a mock that no table has", () => {
    expect(problemsOf(withRows(rows, (s) => (s.tools[1].mock[0].return.refund_id = "{{refund}}")))).toEqual([
      "tools.1.mock: unknown {{refund}}: no scenario's vars has a column 'refund'",
    ]);
  });

  it("refuses a spec that would hold more than 10,000 conversations", () => {
    const many = Array.from({ length: 5001 }, (_, i) => ({ order_id: `A-${i}`, amount: i }));
    expect(problemsOf(withRows(many, (s) => (s.scenarios[0].repeat = 2)))).toEqual([
      "scenarios: the spec asks for 10002 conversations (each scenario's rows times its repeats, and the probes' repeats); at most 10000",
    ]);
  });

  it("refuses a vars_file uploaded without its table", () => {
    const problems = problemsOf(parse(TABLE_SPEC.toString("utf8")));
    expect(problems).toEqual([
      expect.stringMatching(/^scenarios\.0\.vars_file: the table is read from the repository/),
    ]);
  });
});

describe("table files", () => {
  it("reads CSV with a header row, quoted values over several lines, and the line each row starts on", () => {
    const read = readTable(".assure/t.csv", Buffer.from('\uFEFFid,question\n1,"two\nlines"\n2,plain\n'));
    expect(read).toEqual({
      ok: true,
      rows: [
        { id: "1", question: "two\nlines" },
        { id: "2", question: "plain" },
      ],
      lines: [2, 4],
    });
  });

  it("names the line of a CSV row with too many values, and a header with a column twice", () => {
    expect(readTable(".assure/t.csv", Buffer.from("a,b\n1,2\n1,2,3\n"))).toEqual({
      ok: false,
      problems: [{ line: 3, message: expect.stringContaining("columns length is 2, got 3") }],
    });
    expect(readTable(".assure/t.csv", Buffer.from("a,a\n1,2\n"))).toEqual({
      ok: false,
      problems: [{ line: 1, message: "column 'a' appears twice in the header row" }],
    });
  });

  it("reads JSONL with the values' types, and names a line that is not a JSON object", () => {
    expect(readTable(".assure/t.jsonl", Buffer.from('{"a": 1}\n\n{"a": [2]}\n'))).toEqual({
      ok: true,
      rows: [{ a: 1 }, { a: [2] }],
      lines: [1, 3],
    });
    const bad = readTable(".assure/t.jsonl", Buffer.from('{"a": 1}\n[1]\n{"a": \n'));
    expect(bad.ok ? [] : bad.problems.map((p) => p.line)).toEqual([2, 3]);
  });
});

describe("a spec file read from a repository with its table", () => {
  const csv = Buffer.from("id,order_id,amount\nfirst,A-100,42.5\nsecond,B-7,10\n");

  it("inlines the rows, lists the spec's and the table's blob SHAs, and is versioned by content", async () => {
    const loaded = await loadRepositorySpec(".assure/specs/refunds.yaml", TABLE_SPEC, (path) =>
      path === ".assure/refunds.csv" ? csv : undefined,
    );
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    expect(loaded.spec.document.scenarios![0]!.vars).toEqual([
      { id: "first", order_id: "A-100", amount: "42.5" },
      { id: "second", order_id: "B-7", amount: "10" },
    ]);
    expect(loaded.spec.files).toEqual([
      { path: ".assure/specs/refunds.yaml", blob_sha: gitBlobSha(TABLE_SPEC) },
      { path: ".assure/refunds.csv", blob_sha: gitBlobSha(csv) },
    ]);
    expect(loaded.spec.expanded).toBe(true);
  });

  it("names the table's file and the row's line for a bad row, and the spec's line for a missing table", async () => {
    const badRow = await loadRepositorySpec(".assure/specs/refunds.yaml", TABLE_SPEC, () =>
      Buffer.from("id,order_id,amount\nfirst,A-100,42.5\nsecond,B-7\n"),
    );
    expect(badRow).toEqual({
      ok: false,
      problems: [
        {
          file: ".assure/refunds.csv",
          line: 3,
          path: "scenarios[0].vars_file",
          message: expect.stringContaining("got 2"),
        },
      ],
    });

    const missingColumn = await loadRepositorySpec(".assure/specs/refunds.yaml", TABLE_SPEC, () =>
      Buffer.from("id,order_id,amount\nfirst,A-100,42.5\n\nsecond,B-7,\n"),
    );
    expect(missingColumn.ok).toBe(true); // an empty value is a value: "" — the agent is asked to refund ""

    const missing = await loadRepositorySpec(".assure/specs/refunds.yaml", TABLE_SPEC, () => undefined);
    expect(missing).toEqual({
      ok: false,
      problems: [
        {
          file: ".assure/specs/refunds.yaml",
          line: 39,
          path: "scenarios[0].vars_file",
          message: "'.assure/refunds.csv' is not in the repository at this commit",
        },
      ],
    });
  });

  it("names the row's line in the table when a filled-in row breaks the scenario", async () => {
    const text = Buffer.from(
      TABLE_SPEC.toString("utf8").replace("vars_file: .assure/refunds.csv", "vars_file: .assure/refunds.jsonl"),
    );
    const loaded = await loadRepositorySpec(".assure/specs/refunds.yaml", text, () =>
      Buffer.from('{"order_id": "A-1", "amount": 1}\n{"order_id": "A-2"}\n'),
    );
    expect(loaded).toEqual({
      ok: false,
      problems: [
        {
          file: ".assure/refunds.jsonl",
          line: 2,
          path: "scenarios[0].vars[1].amount",
          message: "row 2: no value for column 'amount'",
        },
      ],
    });
  });
});
