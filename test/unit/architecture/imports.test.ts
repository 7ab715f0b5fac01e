import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@jest/globals";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : /\.tsx?$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

/** `server/engine/worker.ts` → `server/engine`; a file directly in `server/` is a unit of its own (`server/errors`). */
function unitOf(file: string): string {
  const parts = file.replace(/\.(tsx?|js)$/, "").split("/");
  return parts.slice(0, 2).join("/");
}

/** Every relative import of every source file under these folders, as unit → units it imports. */
function importGraph(folders: string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of folders.flatMap(sourceFiles)) {
    const from = unitOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const [, specifier] of readFileSync(join(ROOT, file), "utf8").matchAll(
      /(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g,
    )) {
      const to = unitOf(relative(ROOT, resolve(ROOT, dirname(file), specifier!)));
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** The strongly connected components with more than one unit (Tarjan): each is an import cycle. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (unit: string) => {
    order.set(unit, index);
    low.set(unit, index++);
    stack.push(unit);
    for (const next of graph.get(unit) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(unit, Math.min(low.get(unit)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(unit, Math.min(low.get(unit)!, order.get(next)!));
    }
    if (low.get(unit) === order.get(unit)) {
      const component: string[] = [];
      let member: string;
      do component.push((member = stack.pop()!));
      while (member !== unit);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const unit of graph.keys()) if (!order.has(unit)) visit(unit);
  return found;
}

describe("the architecture", () => {
  const graph = importGraph(["server", "app"]);

  it("has no import cycle between the folders of server/ and app/", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("keeps server/ free of the GitHub App and the Action", () => {
    const outward = [...graph]
      .filter(([from]) => from.startsWith("server/"))
      .flatMap(([from, to]) =>
        [...to].filter((unit) => !unit.startsWith("server/")).map((unit) => `${from} → ${unit}`),
      );
    expect(outward).toEqual([]);
  });

  it("finds the cycles it is there to find", () => {
    expect(
      cycles(
        new Map([
          ["a", new Set(["b"])],
          ["b", new Set(["c"])],
          ["c", new Set(["a"])],
          ["d", new Set(["a"])],
        ]),
      ),
    ).toEqual([["a", "b", "c"]]);
  });
});
