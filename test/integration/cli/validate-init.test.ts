import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleA2aAgent, type ExampleA2aAgent } from "../../../examples/agent/a2a.js";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { ROOT, runAssure } from "../../helpers/assure-cli.js";

const DETERMINISTIC = readFileSync(join(ROOT, "examples/refund-agent-deterministic.yaml"), "utf8");
const CONFIG = `version: 1\nruns:\n  - specs: [".assure/specs/*.yaml"]\n    environments: [staging]\n`;

describe("assure validate and assure init", () => {
  const dir = mkdtempSync(join(tmpdir(), "assure-cli-validate-"));
  let n = 0;
  /** A repository folder with these files. */
  const repository = (files: Record<string, string>) => {
    const root = join(dir, `repo-${++n}`);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    mkdirSync(join(root, ".git"), { recursive: true });
    return root;
  };
  let agent: ExampleAgent;
  let a2a: ExampleA2aAgent;

  beforeAll(async () => {
    agent = await startExampleAgent();
    a2a = await startExampleA2aAgent();
  });
  afterAll(async () => {
    await a2a.close();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts a valid config and the specs it names, offline, and exits 0", async () => {
    const root = repository({ ".assure/config.yml": CONFIG, ".assure/specs/refunds.yaml": DETERMINISTIC });
    const result = await runAssure(["validate"], { cwd: root });
    expect(result).toMatchObject({ status: 0, stdout: "" });
    expect(result.stderr).toBe("2 files valid\n");
  });

  it("checks executed_outside_service and a run's executor: allow or never, service or local", async () => {
    const valid = repository({
      ".assure/config.yml": `${CONFIG}    executor: local\nexecuted_outside_service: allow\n`,
      ".assure/specs/refunds.yaml": DETERMINISTIC,
    });
    expect(await runAssure(["validate"], { cwd: valid })).toMatchObject({ status: 0, stderr: "2 files valid\n" });
    const invalid = repository({
      ".assure/config.yml": `${CONFIG}    executor: laptop\nexecuted_outside_service: sometimes\n`,
      ".assure/specs/refunds.yaml": DETERMINISTIC,
    });
    const result = await runAssure(["validate"], { cwd: invalid });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^\.assure\/config\.yml:5: runs\[0\]\.executor: .*"service".*"local"/m);
    expect(result.stdout).toMatch(/^\.assure\/config\.yml:6: executed_outside_service: .*"allow".*"never"/m);
  });

  it("names every problem by file and line, suggests the key a typo meant, and exits 1", async () => {
    const root = repository({
      ".assure/config.yml": CONFIG.replace("environments:", "enviroments:"),
      ".assure/specs/refunds.yaml": DETERMINISTIC.replace("max_tool_calls: 5", "max_tool_cals: 5"),
      ".assure/specs/other.yaml": DETERMINISTIC.replace("timeout_ms: 30000", "timeout_ms: soon"),
    });
    const result = await runAssure(["validate", ".assure/config.yml", ".assure/specs"], { cwd: root });
    expect(result.status).toBe(1);
    expect(result.stdout.split("\n")).toEqual(
      expect.arrayContaining([
        '.assure/config.yml:4: runs[0].enviroments: Unrecognized key: "enviroments" — did you mean environments?',
        '.assure/specs/refunds.yaml:85: scenarios[0].expect[2].max_tool_cals: Unrecognized key: "max_tool_cals" — did you mean max_tool_calls?',
        expect.stringMatching(/^\.assure\/specs\/other\.yaml:8: defaults\.timeout_ms: /),
      ]),
    );
    expect(result.stderr).toMatch(/problems in 3 files/);
  });

  it("reads the tables a spec names, and points at the table's line; a glob that matches nothing and two specs of one name are problems", async () => {
    const table = `${DETERMINISTIC.split("scenarios:")[0]}scenarios:
  - id: refund
    vars_file: .assure/cases.csv
    turns:
      - user: Refund order {{order_id}} please.
        expect:
          - tool_called: { name: lookup_order, args: { order_id: "{{order_id}}" } }
gates:
  - id: DET
    require: { expectations: all }
`.replace("name: refund-agent-deterministic", "name: tabled");
    const root = repository({
      ".assure/config.yml": CONFIG.replace(
        '[".assure/specs/*.yaml"]',
        '[".assure/specs/*.yaml", ".assure/nothing/*.yaml"]',
      ),
      ".assure/specs/table.yaml": table,
      ".assure/specs/a.yaml": DETERMINISTIC,
      ".assure/specs/b.yaml": DETERMINISTIC,
      ".assure/cases.csv": 'order_id\nA-1\n"unterminated\n',
    });
    const result = await runAssure(["validate"], { cwd: join(root, ".assure") });
    expect(result.status).toBe(1);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        "config.yml:3: runs[0].specs[1]: '.assure/nothing/*.yaml' matches no file",
        expect.stringMatching(/^cases\.csv:3: scenarios\[0\]\.vars_file: /),
        "specs/b.yaml:1: name: 'refund-agent-deterministic' is also the name of .assure/specs/a.yaml: a spec's name must be unique",
      ]),
    );
    expect((await runAssure(["validate", "cases.csv"], { cwd: join(root, ".assure") })).stdout).toMatch(
      /^cases\.csv:3: \(table\): /,
    );
  });

  it("exits 64 with no file and no config, and 65 for a file that does not exist", async () => {
    const root = repository({});
    expect((await runAssure(["validate"], { cwd: root })).status).toBe(64);
    expect((await runAssure(["validate", "--strict"], { cwd: root })).status).toBe(64);
    const missing = await runAssure(["validate", "nope.yaml"], { cwd: root });
    expect(missing.status).toBe(65);
    expect(missing.stderr).toMatch(/nope\.yaml does not exist/);
  });

  it("init finds the protocol an agent speaks and writes a config and spec that validate accepts and test runs", async () => {
    const root = repository({});
    const init = await runAssure(["init", "--agent", agent.baseUrl], { cwd: root });
    expect(init.status).toBe(0);
    expect(init.stdout).toContain(`The agent at ${agent.baseUrl} speaks openai-chat.`);
    expect(init.stdout).toContain(`npx assure test --agent ${agent.baseUrl}`);
    expect(readFileSync(join(root, ".assure/config.yml"), "utf8")).toMatch(/^# project: prj_/m);
    expect((await runAssure(["validate"], { cwd: root })).status).toBe(0);
    const test = await runAssure(["test", "--agent", agent.baseUrl], { cwd: root });
    expect(test.stdout).toMatch(/Release allowed: 1 of 1 gate passed/);
    expect(test.status).toBe(0);

    // Written once: a second init keeps what is there, unless --force.
    const again = await runAssure(["init", "--agent", agent.baseUrl], { cwd: root });
    expect(again.status).toBe(65);
    expect(again.stderr).toMatch(/already exist/);
    expect((await runAssure(["init", "--agent", agent.baseUrl, "--force"], { cwd: root })).status).toBe(0);
  });

  it("init tells an A2A agent and an Anthropic Messages agent by their probes", async () => {
    const viaA2a = await runAssure(["init", "--agent", a2a.baseUrl], { cwd: repository({}) });
    expect(viaA2a.status).toBe(0);
    expect(viaA2a.stdout).toMatch(/speaks a2a\./);
    expect(viaA2a.stdout).toContain(`--protocol a2a`);
    const viaMessages = await runAssure(["init", "--agent", agent.baseUrl, "--protocol", "anthropic-messages"], {
      cwd: repository({}),
    });
    expect(viaMessages.status).toBe(0);
    expect(viaMessages.stdout).toContain(
      `npx assure test --agent ${agent.baseUrlFor("anthropic-messages")} --protocol anthropic-messages`,
    );
  });

  it("init exits 2 when the agent answers no protocol's probe, and writes nothing", async () => {
    const root = repository({});
    const result = await runAssure(["init", "--agent", "http://127.0.0.1:9/v1"], { cwd: root });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/answered no protocol's readiness probe/);
    expect((await runAssure(["validate"], { cwd: root })).status).toBe(64);
  });
});
