import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { parse } from "yaml";
import { startScriptedAgent } from "../../helpers/scripted-agent.js";
import { readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/**
 * The adversarial review's attacks with hostile input (issue: "The gate holds"): bodies, specs,
 * tables and an agent's answers shaped to exhaust the stack or hold the event loop.
 */
const TABLE_SPEC = readFileSync(new URL("../../../examples/tables/refunds-table.yaml", import.meta.url), "utf8");
const SHA = "2222222222222222222222222222222222222222";
const nested = (depth: number, leaf = "1") => `${'{"a":'.repeat(depth)}${leaf}${"}".repeat(depth)}`;

describe("attacks with hostile input", () => {
  let t: TestService;
  let p: SeededProject;
  const deepArguments = `{"order_id":${"[".repeat(200_000)}${"]".repeat(200_000)}}`;
  let agent: Awaited<ReturnType<typeof startScriptedAgent>>;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "1" } });
    agent = await startScriptedAgent((messages) =>
      messages.at(-1)?.role === "tool"
        ? { content: "Order A-100 is delivered." }
        : { content: null, tool_calls: [{ name: "lookup_order", raw_arguments: deepArguments }] },
    );
    p = await seedProject(t, agent.baseUrl);
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  describe("finding 8: deep input gives 500", () => {
    it("refuses a spec whose mocks nest 1,850 deep, as JSON and as YAML, and a body nested two million deep, with 400 naming the place", async () => {
      const spec = parse(TABLE_SPEC) as {
        tools: { mock: unknown[] }[];
        scenarios: { vars_file?: string; vars?: unknown[] }[];
      };
      delete spec.scenarios[0]!.vars_file;
      spec.scenarios[0]!.vars = [{ id: "one", order_id: "A-1", amount: 1, reply: "yes" }];
      const asJson = JSON.stringify({ spec }).replace('"mock":[', `"mock":[{"return":${nested(1850)}},`);
      const json = await p.client.call("POST", "/v1/test-specs", { body: asJson, contentType: "application/json" });
      expect(json.status).toBe(400);
      expect(json.body.error).toMatchObject({
        code: "VALIDATION_FAILED",
        details: [{ path: "body", message: expect.stringMatching(/^nested deeper than 64 levels/) }],
      });

      const asYaml = `${TABLE_SPEC.replace(/vars_file: .*\n/, "vars: [{ id: one, order_id: A-1, amount: 1 }]\n")}\nextra: ${"[".repeat(1850)}${"]".repeat(1850)}\n`;
      const yaml = await p.client.call("POST", "/v1/test-specs", { body: asYaml, contentType: "application/yaml" });
      expect(yaml.status).toBe(400);
      expect(yaml.body.error.details[0]).toMatchObject({
        path: "spec",
        message: expect.stringMatching(/^nested deeper than 64 levels \(line \d+\)$/),
      });

      const huge = await p.client.call("POST", "/v1/test-specs", {
        body: `{"spec":${"[".repeat(2_000_000)}${"]".repeat(2_000_000)}}`,
        contentType: "application/json",
      });
      expect(huge.status).toBe(400);
      expect(huge.body.error.code).toBe("VALIDATION_FAILED");
      expect((await p.client.get("/v1/test-specs")).body.data).toHaveLength(1);
    });

    it("refuses a table row nested deep, naming its line", async () => {
      const row = `{"id":"deep","order_id":"A-1","amount":1,"note":${nested(2000, '"x"')}}`;
      const response = await p.client.post("/v1/test-specs", {
        file: {
          repository: "acme/refunds",
          commit_sha: SHA,
          path: ".assure/specs/refunds.yaml",
          content: TABLE_SPEC.replace("vars_file: .assure/refunds.csv", "vars_file: .assure/refunds.jsonl"),
          tables: [{ path: ".assure/refunds.jsonl", content: `{"id":"ok","order_id":"A-2","amount":2}\n${row}\n` }],
        },
      });
      // A table of the repository's spec file that is not valid: the request itself is well-formed.
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe("SPEC_FILE_INVALID");
      expect(response.body.error.details).toEqual([
        {
          path: "body.file.tables[0]",
          message: ".assure/refunds.jsonl:2: scenarios[0].vars_file: the row nests deeper than 64 levels",
        },
      ]);
    });

    it("records an agent's tool arguments nested 200,000 deep as invalid arguments, and judges the run", async () => {
      const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
      const run = await waitForRun(p.client, run_id);
      expect(run.status).not.toBe("FAILED");
      const calls = (await readTrace(p.client, run_id)).filter((event) => event.type === "tool.called");
      expect(calls.length).toBeGreaterThan(0);
      expect(calls[0]!.data).toMatchObject({
        name: "lookup_order",
        arguments: {},
        arguments_error: "arguments nest deeper than 64 levels",
      });
    });
  });

  describe("finding 7: unbounded work on tables", () => {
    const upload = (path: string, content: string) =>
      p.client.post("/v1/test-specs", {
        file: {
          repository: "acme/refunds",
          commit_sha: SHA,
          path: ".assure/specs/refunds.yaml",
          content: TABLE_SPEC.replace("vars_file: .assure/refunds.csv", `vars_file: ${path}`),
          tables: [{ path, content }],
        },
      });

    it("stops reading a 1.2-million-row CSV table past the 10,000 rows a spec takes, and a 600,000-column header at the column cap", async () => {
      // Within the body limit: three bytes a row (four in the JSON body).
      const long = await upload(".assure/refunds.csv", `id,order_id,amount\n${",,\n".repeat(1_200_000)}`);
      expect(long.status).toBe(422);
      expect(long.body.error.code).toBe("SPEC_FILE_INVALID");
      expect(long.body.error.details[0].message).toMatch(/the table has more than 10000 rows; at most 10000$/);

      const wide = await upload(
        ".assure/refunds.csv",
        `${Array.from({ length: 600_000 }, (_, i) => `c${i % 10}`).join(",")}\n1\n`,
      );
      expect(wide.status).toBe(422);
      expect(wide.body.error.code).toBe("SPEC_FILE_INVALID");
      expect(wide.body.error.details[0].message).toMatch(
        /a row is longer than 1048576 characters|names 600000 columns/,
      );
    });
  });
});
