import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { TestSpecDocument } from "../contract/index.js";
import { ApiError, type ErrorDetail } from "../errors.js";
import { toCanonicalJson, contentAddress } from "./canonical-json.js";

export interface ParsedSpec {
  document: TestSpecDocument;
  canonical: string;
  spec_version: string;
}

/** `scenarios[0].turns` style: how a reader finds the place in the file. */
export function formatIssuePath(path: readonly PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "(root)";
}

export function toDetails(issues: readonly z.core.$ZodIssue[], prefix: string, lineOf?: (path: PropertyKey[]) => number | undefined) {
  return issues.map((issue): ErrorDetail => {
    const line = lineOf?.(issue.path);
    const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] ?? ""] : issue.path;
    return {
      path: formatIssuePath(path, prefix),
      message: line === undefined ? issue.message : `${issue.message} (line ${line})`,
    };
  });
}

export function fromValidDocument(document: TestSpecDocument): ParsedSpec {
  return { document, canonical: toCanonicalJson(document), spec_version: contentAddress(document) };
}

/** Parses and validates a spec written in YAML (JSON is YAML too); errors name the path and line. */
export function parseSpecText(text: string): ParsedSpec {
  const lineCounter = new LineCounter();
  const yamlDocument = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  if (yamlDocument.errors.length > 0) {
    throw new ApiError("VALIDATION_FAILED", {
      message: "The spec is not valid YAML.",
      details: yamlDocument.errors.map((error) => ({
        path: "spec",
        message: `${error.message.split("\n")[0]}${error.linePos ? ` (line ${error.linePos[0].line})` : ""}`,
      })),
    });
  }
  let value: unknown;
  try {
    value = yamlDocument.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ApiError("VALIDATION_FAILED", {
      message: "The spec's YAML cannot be expanded.",
      details: [{ path: "spec", message: error instanceof Error ? error.message : String(error) }],
    });
  }
  const parsed = TestSpecDocument.safeParse(value);
  if (!parsed.success) {
    const lineOf = (path: PropertyKey[]) => {
      for (let depth = path.length; depth >= 0; depth--) {
        const node = yamlDocument.getIn(path.slice(0, depth) as unknown[], true) as { range?: [number] } | undefined;
        if (node?.range) return lineCounter.linePos(node.range[0]).line;
      }
      return undefined;
    };
    throw new ApiError("VALIDATION_FAILED", {
      message: "The spec does not match the test specification format.",
      details: toDetails(parsed.error.issues, "spec", lineOf),
    });
  }
  return fromValidDocument(parsed.data);
}
