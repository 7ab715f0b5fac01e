import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { gitBlobSha } from "../../../server/specs/canonical-json.js";
import { readConversations, startRun, waitForRun } from "../../helpers/runs.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const SPEC_PATH = ".assure/specs/refunds.yaml";
const TABLE_PATH = ".assure/refunds.csv";
/** The example table spec, its second turn's user message taken from the row too. */
const SPEC_TEXT = readFileSync(new URL("../../../examples/tables/refunds-table.yaml", import.meta.url), "utf8").replace(
  "user: Yes, refund the full amount.",
  'user: "{{reply}}"',
);
const SHA = "1111111111111111111111111111111111111111";

function fileBody(p: SeededProject, table: string, spec = SPEC_TEXT) {
  return {
    project_id: p.projectId,
    file: {
      repository: "acme/refunds",
      commit_sha: SHA,
      path: SPEC_PATH,
      content: spec,
      tables: [{ path: TABLE_PATH, content: table }],
    },
  };
}

describe("specs whose scenarios come from tables", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let p: SeededProject;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "2" } });
    agent = await startExampleAgent();
    p = await seedProject(t, agent.baseUrl);
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  it("takes a repository's spec file with its CSV table: versioned by content, listing both files' blob SHAs", async () => {
    const table = "id,order_id,amount,reply\nfirst,A-100,42.5,Yes please.\n";
    const created = await p.client.post("/v1/test-specs", fileBody(p, table));
    expect(created.status).toBe(201);
    expect(created.body.spec_version).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(created.body.source).toEqual({
      repository: "acme/refunds",
      commit_sha: SHA,
      path: SPEC_PATH,
      files: [
        { path: SPEC_PATH, blob_sha: gitBlobSha(Buffer.from(SPEC_TEXT)) },
        { path: TABLE_PATH, blob_sha: gitBlobSha(Buffer.from(table)) },
      ],
    });
    expect(created.body.spec.scenarios[0].vars).toEqual([
      { id: "first", order_id: "A-100", amount: "42.5", reply: "Yes please." },
    ]);
    // The same files again: the same version. Another table: another version.
    const again = await p.client.post("/v1/test-specs", fileBody(p, table));
    expect(again.status).toBe(200);
    expect(again.body.spec_version).toBe(created.body.spec_version);
    const changed = await p.client.post("/v1/test-specs", fileBody(p, `${table}second,B-7,10,Yes please.\n`));
    expect(changed.status).toBe(201);
    expect(changed.body.spec_version).not.toBe(created.body.spec_version);
  });

  it("keeps the files' bytes exact when they come as base64, whatever their encoding", async () => {
    const latin1 = Buffer.concat([
      Buffer.from("id,order_id,amount,reply\nfirst,A-100,42.5,Oui tr"),
      Buffer.from([0xe8]),
      Buffer.from("s bien\n"),
    ]);
    const body = fileBody(p, "");
    const file = {
      ...body.file,
      content: Buffer.from(SPEC_TEXT).toString("base64"),
      encoding: "base64",
      tables: [{ path: TABLE_PATH, content: latin1.toString("base64"), encoding: "base64" }],
    };
    const created = await p.client.post("/v1/test-specs", { ...body, file });
    expect(created.status).toBe(201);
    expect(created.body.source.files[1]).toEqual({ path: TABLE_PATH, blob_sha: gitBlobSha(latin1) });
  });

  it("refuses a bad row with the table's file, line and problem, and writes nothing", async () => {
    const before = await t.service.store.countRows();
    const response = await p.client.post(
      "/v1/test-specs",
      fileBody(p, "id,order_id,amount,reply\nfirst,A-100,42.5,Yes\nsecond,B-7\n"),
    );
    // The request is well-formed; the repository's files it carries are not a valid spec.
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe("SPEC_FILE_INVALID");
    expect(response.body.error.details).toEqual([
      {
        path: "body.file.tables[0]",
        message: expect.stringMatching(/^\.assure\/refunds\.csv:3: scenarios\[0\]\.vars_file: .*got 2/),
      },
    ]);
    const missing = await p.client.post("/v1/test-specs", {
      ...fileBody(p, ""),
      file: { ...fileBody(p, "").file, tables: [] },
    });
    expect(missing.body.error.details).toEqual([
      {
        path: "body.file.content",
        message: `${SPEC_PATH}:39: scenarios[0].vars_file: '${TABLE_PATH}' is not in the repository at this commit`,
      },
    ]);
    const unknown = await p.client.post("/v1/test-specs", fileBody(p, "id,order_id,amount\nfirst,A-100,42.5\n"));
    // A column the spec uses that the table lacks: at the table's header row.
    expect(unknown.body.error.details).toEqual([
      {
        path: "body.file.tables[0]",
        message: `${TABLE_PATH}:1: scenarios[0].vars: unknown {{reply}}: no row of this scenario's vars has a column 'reply'`,
      },
    ]);
    expect(await t.service.store.countRows()).toEqual(before);
  });

  it("holds one conversation per row, named by its key, and judges each row on its own", async () => {
    const table = [
      "id,order_id,amount,reply",
      'first,A-100,42.5,"Yes, refund the full amount."',
      'second,B-7,10,"Yes, refund the full amount."',
      'third,C-3,99,"No thanks, I will keep it."',
    ].join("\n");
    const spec = (await p.client.post("/v1/test-specs", fileBody(p, table))).body;
    const { run_id } = await startRun(p.client, { test_spec_id: spec.test_spec_id, environment_id: p.environmentId });
    const run = await waitForRun(p.client, run_id);
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "FAIL", spec_version: spec.spec_version });

    const conversations = await readConversations(p.client, run_id);
    expect(conversations.map((c) => c.scenario_id).sort()).toEqual([
      "refund[first]",
      "refund[second]",
      "refund[third]",
    ]);
    const evaluations = (await p.client.get(`/v1/runs/${run_id}/evaluations?limit=200`)).body.data as {
      scenario_id: string;
      status: string;
      spec_path: string;
    }[];
    const failed = evaluations.filter((e) => e.status === "failed");
    expect(failed.map((e) => [e.scenario_id, e.spec_path])).toEqual([
      ["refund[third]", "scenarios[0].turns[1].expect[0]"],
    ]);
    expect(evaluations.filter((e) => e.scenario_id === "refund[second]" && e.status === "passed")).toHaveLength(2);
    // The row's amount reached the agent through the filled-in mock, and back in its refund call.
    const trace = (await p.client.get(`/v1/runs/${run_id}/trace?limit=200`)).body.data as {
      type: string;
      data: Record<string, any>;
    }[];
    expect(
      trace
        .filter((e) => e.type === "tool.called" && e.data.name === "issue_refund")
        .map((e) => e.data.arguments)
        .sort((a, b) => a.order_id.localeCompare(b.order_id)),
    ).toEqual([
      { order_id: "A-100", amount: "42.5" },
      { order_id: "B-7", amount: "10" },
    ]);
  });
});
