import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { redocly } from "../../helpers/redocly.js";
import { spectralProblems } from "../../helpers/spectral.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const SNAPSHOT = "docs/openapi-v1.json";

/** Every version of the v1 snapshot that was committed, oldest first (as much history as the clone has). */
function committedSnapshots(): { commit: string; text: string }[] {
  // Along main's own line: a branch merged into it is judged by its merge, not commit by commit
  // interleaved with main's (where another branch's addition would look removed).
  const log = execFileSync("git", ["log", "--first-parent", "--format=%H", "--reverse", "--", SNAPSHOT], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return log
    .split("\n")
    .filter(Boolean)
    .map((commit) => ({
      commit,
      // The document is past the default 1 MiB of output.
      text: execFileSync("git", ["show", `${commit}:${SNAPSHOT}`], {
        cwd: ROOT,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
      }),
    }));
}

/** Changes a diff rates breaking where the document only caught up with what the service always did. */
const CORRECTIONS = new Set(
  (
    JSON.parse(readFileSync(join(ROOT, "docs/openapi-corrections.json"), "utf8")) as {
      corrections: { pointer: string }[];
    }
  ).corrections.map((c) => c.pointer),
);

interface DiffChange {
  kind: string;
  impact: string;
  verdicts: { ruleId: string }[];
  base?: { pointer: string };
  revision?: { pointer: string; value?: unknown };
}
interface DiffReport {
  changes: DiffChange[];
}

/**
 * A new event type is additive (consumers ignore types they do not know, and the envelope's
 * `Other…` schema took any type it did not list): the envelope gains a `oneOf` schema whose `type`
 * is a constant, and `Other…` lists that type among those it is not. A diff rates both breaking.
 */
function addsAnEventType(change: DiffChange): boolean {
  const pointer = change.revision?.pointer ?? "";
  const rules = change.verdicts.map((verdict) => verdict.ruleId);
  if (/^#\/components\/schemas\/(RunEvent|DecisionEvent)\/oneOf\/\d+$/.test(pointer)) {
    const value = change.revision?.value as { properties?: { type?: { const?: unknown } } } | undefined;
    return change.kind === "added" && typeof value?.properties?.type?.const === "string";
  }
  return (
    /^#\/components\/schemas\/Other(RunEvent|DecisionEvent)\/properties\/type\/not\/enum$/.test(pointer) &&
    rules.every((rule) => rule === "enum-values-added")
  );
}

/** The breaking changes from `older` to `newer` (files), but for the listed corrections and new event types. */
function breakingChanges(older: string, newer: string): { changes: string[]; report: string } {
  const diff = redocly(["diff", older, newer, "--format", "json", "--fail-on", "none"]);
  const report = JSON.parse(diff.stdout.slice(diff.stdout.indexOf("{"))) as DiffReport;
  const changes = report.changes
    .filter((change) => change.impact === "major" && !addsAnEventType(change))
    .map((change) => change.revision?.pointer ?? change.base?.pointer ?? "?")
    .filter((pointer) => !CORRECTIONS.has(pointer));
  return { changes, report: diff.stdout };
}

describe("the v1 OpenAPI document", () => {
  let t: TestService;
  let dir: string;
  let served: string;
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  beforeAll(async () => {
    t = await startTestService();
    dir = mkdtempSync(join(tmpdir(), "assure-openapi-"));
    served = `${JSON.stringify(await (await fetch(`${t.baseUrl}/v1/openapi.json`)).json(), null, 2)}\n`;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes Spectral's spectral:oas rules with no error and no warning", () => {
    const problems = spectralProblems(file("served.json", served));
    expect(problems.map((p) => `${p.code}: ${p.message} at ${p.path.join("/")}`)).toEqual([]);
  }, 60_000);

  it("lists, for every operation, the statuses it answers with the envelope and their codes, and its headers", () => {
    type Response = {
      headers?: Record<string, unknown>;
      content?: { "application/json"?: { schema: { allOf?: { properties?: any }[] } } };
    };
    const document = JSON.parse(served) as {
      paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
    };
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const where = `${method.toUpperCase()} ${path}`;
        const errors = Object.entries(operation.responses).filter(([status]) => /^[45]\d\d$/.test(status));
        if (errors.length === 0) missing.push(`${where}: no error status`);
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!/^\d+$/.test(status)) continue;
          if (!response.headers?.["X-Request-Id"]) missing.push(`${where} ${status}: no X-Request-Id`);
        }
        for (const [status, response] of errors) {
          const codes =
            response.content?.["application/json"]?.schema.allOf?.[1]?.properties?.error?.properties?.code?.enum;
          if (!Array.isArray(codes) || codes.length === 0) missing.push(`${where} ${status}: no codes`);
          if (status === "429" && !response.headers?.["Retry-After"]) missing.push(`${where} 429: no Retry-After`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("passes Redocly's recommended-strict rules with no error and no warning", () => {
    const lint = redocly(["lint", file("served.json", served), "--format=json"]);
    const report = JSON.parse(lint.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("makes no breaking change against the committed v1 snapshot, and the snapshot is up to date", () => {
    const diff = breakingChanges(SNAPSHOT, file("served.json", served));
    if (diff.changes.length > 0) throw new Error(`A breaking change to the v1 API: ${diff.changes.join(", ")}`);
    if (served !== readFileSync(join(ROOT, SNAPSHOT), "utf8")) {
      throw new Error(`The API changed (additively): run \`npm run openapi:snapshot\` and commit ${SNAPSHOT}.`);
    }
  });

  it("was never changed in a breaking way in any commit of the snapshot, nor by what is served now", () => {
    const versions = [...committedSnapshots(), { commit: "the working tree (served)", text: served }];
    expect(versions.length).toBeGreaterThanOrEqual(2);
    for (const [older, newer] of versions.slice(0, -1).map((v, i) => [v, versions[i + 1]!] as const)) {
      const diff = breakingChanges(file("older.json", older.text), file("newer.json", newer.text));
      if (diff.changes.length > 0) {
        throw new Error(`Commit ${newer.commit} broke the v1 API: ${diff.changes.join(", ")}`);
      }
    }
  });

  it("takes a new event type as additive", () => {
    type Schemas = Record<string, any>;
    const older = JSON.parse(served) as { components: { schemas: Schemas } };
    const { RunEvent, OtherRunEvent } = older.components.schemas;
    RunEvent.oneOf = RunEvent.oneOf.filter(
      (variant: { $ref: string }) => !variant.$ref.endsWith("/FindingRaisedEvent"),
    );
    delete RunEvent.discriminator.mapping["finding.raised"];
    OtherRunEvent.properties.type.not.enum = OtherRunEvent.properties.type.not.enum.filter(
      (type: string) => type !== "finding.raised",
    );
    delete older.components.schemas.FindingRaisedEvent;
    expect(breakingChanges(file("older.json", JSON.stringify(older)), file("served.json", served)).changes).toEqual([]);
  });

  it("is checked by a diff that does catch breaking changes", () => {
    type Document = { paths: Record<string, unknown>; components: { schemas: Record<string, any> } };
    const breaking: ((d: Document) => unknown)[] = [
      (d: Document) => delete d.paths["/v1/runs/{run_id}/evidence"], // a removed path
      (d: Document) => delete d.components.schemas.Run.properties.verdict, // a removed response field
      (d: Document) =>
        (d.components.schemas.CreateRunBodyInput.required = [
          ...d.components.schemas.CreateRunBodyInput.required,
          "spec_version",
        ]),
      (d: Document) => (d.components.schemas.CreateProjectBodyInput.properties.name.maxLength = 10), // a narrowed request type
    ];
    // A field removed from an event type's data is caught.
    breaking.push((d: Document) => delete d.components.schemas.ToolCalledEvent.properties.data.properties.name);
    // And the corrections accepted are only those listed: the same change elsewhere is caught.
    breaking.push((d: Document) => {
      const listProjects = d.paths["/v1/projects"] as { get: { parameters: { name: string; required?: boolean }[] } };
      listProjects.get.parameters.find((parameter) => parameter.name === "limit")!.required = true;
    });
    for (const change of breaking) {
      const changed = JSON.parse(served) as Document;
      change(changed);
      expect(
        breakingChanges(file("served.json", served), file("changed.json", JSON.stringify(changed))).changes,
      ).not.toEqual([]);
    }
  });
});
