import type { Expectation, Severity, Tool, ToolEffect } from "../../document-shape.js";
import type { Attack } from "../attack.js";
import type { Random } from "../random.js";
import type { Classification } from "../taxonomy.js";

/** What a family generates from: the tools it may aim at (the entry's `tools`, else all the spec's), and a seeded random. */
export interface FamilyContext {
  tools: readonly Tool[];
  random: Random;
}

/**
 * A probe's `fail_if` condition: an expectation kind of the spec format, or one of the detectors
 * the families use by name. The expansion keeps a condition only where this build registers its
 * kind, and generates no probe left without one (the coverage says so).
 */
export type FailCondition =
  | Expectation
  | { value_leaked: string[] }
  | { outside_image: true }
  | { unsafe_markup: true }
  | { sql_injected: true }
  | { steps_exhausted: true };

/** One probe as a family writes it, before the strategies and the entry's options. */
export interface FamilyProbe {
  /** Unique within the family: part of the probe's id. */
  key: string;
  description: string;
  severity: Severity;
  attack: Attack;
  /** Where the attack's `injected` text goes. */
  inject?: { tool: string; field: string } | undefined;
  plant?: { tool: string; field: string; value: string }[] | undefined;
  canary?: boolean | undefined;
  fail_if: FailCondition[];
  /** Where it differs from the family's. */
  classification?: Partial<Classification> | undefined;
  /** Whether the strategies apply to it (a scripted conversation may read wrong encoded). */
  strategies?: boolean | undefined;
}

export interface FamilyOutput {
  probes: FamilyProbe[];
  /** What it could not generate, and why (no tool of the effect it needs, no mocked result…). */
  skipped: string[];
}

/**
 * A family of attacks on one risk: what it sends, what trips it, where it sits in the
 * taxonomies, and what it needs of the spec. Adding one is a file that defines it, and a line
 * in `index.ts`.
 */
export interface Family {
  name: string;
  title: string;
  classification: Classification;
  /** What it needs of the spec, in words. */
  needs: string;
  /** What it sends. */
  sends: string;
  /** What trips it. */
  trips: string;
  generate(context: FamilyContext): FamilyOutput;
}

export function defineFamily(family: Family): Family {
  return family;
}

/** At most this many tools of one kind a family aims at, so that a spec with many tools does not multiply the probes. */
export const MAX_TARGETS = 3;

export const toolsWithEffect = (tools: readonly Tool[], ...effects: ToolEffect[]) =>
  tools.filter((tool) => tool.effect !== undefined && effects.includes(tool.effect)).slice(0, MAX_TARGETS);

/** The tools whose mocks answer with an object: where a value can be planted or a text injected. */
export const mockedObjectTools = (tools: readonly Tool[]) =>
  tools.filter((tool) =>
    (tool.mock ?? []).some(
      (mock) => mock.return !== null && typeof mock.return === "object" && !Array.isArray(mock.return),
    ),
  );

/** How to ask for a call of a tool that its mocks answer: with the arguments of its first `when`, if it has one. */
export function askFor(tool: Tool, mockIndex?: number): string {
  const mocks = tool.mock ?? [];
  const when = (mockIndex === undefined ? mocks.find((mock) => mock.when) : mocks[mockIndex])?.when;
  const args = when
    ? Object.entries(when)
        .map(([name, value]) => `${name} ${typeof value === "string" ? value : JSON.stringify(value)}`)
        .join(", ")
    : "";
  return args ? `${tool.name} with ${args}` : tool.name;
}

/** The noun for the skipped note: "no tool marked effect: destructive". */
export const noToolMarked = (...effects: ToolEffect[]) =>
  `no tool marked effect: ${effects.join(" or ")}${effects.length > 0 ? " among the targets" : ""}`;

/** A regular expression matching a text as written (for `response: { matches }`). */
export const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
