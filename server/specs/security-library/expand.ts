import { EXPECTATION_KINDS } from "../expectations/index.js";
import { SecurityProbe, type TestSpecDocument, type Tool } from "../document-shape.js";
import { describeAttack } from "./attack.js";
import type { LibraryEntry, SecurityCoverage } from "./entry.js";
import { isLibraryEntry } from "./entry.js";
import { familyNamed, type Family } from "./families/index.js";
import { presetNamed, type StrategyItem } from "./presets.js";
import { seedOf, seededRandom } from "./random.js";
import { applyStrategies } from "./strategies/index.js";
import { OWASP_ASI_2026, OWASP_LLM_IDS } from "./taxonomy.js";

/** A spec as written: `security:` may hold library entries beside probes. */
export type WrittenDocument = Omit<TestSpecDocument, "security"> & {
  security?: (SecurityProbe | LibraryEntry)[] | undefined;
};

/** A problem with an entry, at its path under `security[i]`. */
export interface ExpansionProblem {
  path: (string | number)[];
  message: string;
}

export interface Expansion {
  document: TestSpecDocument;
  /** For each probe of the expanded document, the index of the `security:` item it came from. */
  origins: number[];
  problems: ExpansionProblem[];
}

const REGISTERED = new Set<string>(EXPECTATION_KINDS.map((kind) => kind.name));

/** The expanded documents' origins, for the lines of their YAML (spec-version.ts): the document is the key. */
const ORIGINS = new WeakMap<object, number[]>();
export const originsOf = (document: object): number[] | undefined => ORIGINS.get(document);

/**
 * Replaces each library entry of `security:` (a preset, a family) by the concrete probes it
 * makes, in place, deterministically: the same document gives the same probes. Each probe carries
 * where it came from and its attack (`library`); `security_coverage` says per entry what was
 * probed and what could not be, and why. A document without entries is returned as it is.
 */
export function expandSecurityLibrary(written: WrittenDocument): Expansion {
  const items = written.security ?? [];
  if (!items.some(isLibraryEntry)) {
    const document = written as TestSpecDocument;
    return { document, origins: items.map((_, i) => i), problems: [] };
  }
  const probes: SecurityProbe[] = [];
  const origins: number[] = [];
  const coverage: SecurityCoverage = [];
  const problems: ExpansionProblem[] = [];
  const tools = written.tools ?? [];
  const defaultSystem = written.scenarios?.[0]?.system;
  const taken = new Set(items.filter((item) => !isLibraryEntry(item)).map((item) => (item as SecurityProbe).id));
  items.forEach((item, index) => {
    if (!isLibraryEntry(item)) {
      probes.push(item);
      origins.push(index);
      return;
    }
    const known = new Set(tools.map((tool) => tool.name));
    const unknown = (item.tools ?? []).findIndex((name) => !known.has(name));
    if (unknown >= 0) {
      problems.push({
        path: [index, "tools", unknown],
        message: `tool '${item.tools![unknown]}' is not defined under tools`,
      });
      return;
    }
    const made = expandEntry(item, {
      tools: item.tools ? tools.filter((tool) => item.tools!.includes(tool.name)) : tools,
      system: item.system ?? defaultSystem,
      seed: item.seed ?? seedOf(written.name),
      taken,
    });
    for (const probe of made.probes) {
      const valid = SecurityProbe.safeParse(probe);
      if (!valid.success) {
        problems.push({
          path: [index],
          message: `the library made an invalid probe '${probe.id}': ${valid.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
        });
        continue;
      }
      probes.push(valid.data);
      origins.push(index);
    }
    coverage.push(made.coverage);
  });
  const document: TestSpecDocument = { ...written, security: probes, security_coverage: coverage };
  ORIGINS.set(document, origins);
  return { document, origins, problems };
}

interface EntryContext {
  tools: readonly Tool[];
  system: string | undefined;
  seed: number;
  /** Probe ids in use: a generated one that would clash gets a suffix. */
  taken: Set<string>;
}

function expandEntry(entry: LibraryEntry, context: EntryContext) {
  const preset = entry.preset === undefined ? undefined : presetNamed(entry.preset)!;
  const label = preset ? `preset:${preset.name}` : `family:${entry.family!}`;
  const plan = preset
    ? preset.families.map(({ family, strategies }) => ({
        family: familyNamed(family)!,
        strategies: entry.strategies ?? strategies,
      }))
    : [{ family: familyNamed(entry.family!)!, strategies: entry.strategies ?? [] }];
  const probes: SecurityProbe[] = [];
  const skipped: SecurityCoverage[number]["skipped"] = [];
  for (const { family, strategies } of plan) {
    const made = expandFamily(family, strategies, entry, label, context);
    probes.push(...made.probes);
    skipped.push(...made.skipped.map((skip) => ({ family: family.name, ...skip })));
  }
  const count = (id: string) =>
    probes.filter((probe) => probe.library!.owasp_llm === id || probe.library!.owasp_asi === id).length;
  const ids = preset
    ? preset.taxonomy === "owasp_llm"
      ? Object.values(OWASP_LLM_IDS)
      : Object.keys(OWASP_ASI_2026)
    : [...new Set(probes.flatMap((probe) => [probe.library!.owasp_llm, probe.library!.owasp_asi ?? []].flat()))].sort();
  const categories = ids.map((id) => ({
    id,
    probes: count(id),
    ...(preset?.notTestable[id] ? { not_testable: preset.notTestable[id] } : {}),
  }));
  return { probes, coverage: { entry: label, seed: context.seed, probes: probes.length, categories, skipped } };
}

function expandFamily(
  family: Family,
  strategies: readonly StrategyItem[],
  entry: LibraryEntry,
  label: string,
  context: EntryContext,
): { probes: SecurityProbe[]; skipped: { reason: string; probes?: number }[] } {
  const seed = (context.seed ^ seedOf(family.name)) >>> 0;
  const generated = family.generate({ tools: context.tools, random: seededRandom(seed) });
  const skipped: { reason: string; probes?: number }[] = generated.skipped.map((reason) => ({ reason }));
  const tally = new Map<string, number>();
  const note = (reason: string) => tally.set(reason, (tally.get(reason) ?? 0) + 1);
  const probes: SecurityProbe[] = [];
  for (const written of generated.probes) {
    const fail_if = written.fail_if.filter((condition) => REGISTERED.has(Object.keys(condition)[0]!));
    if (fail_if.length === 0) {
      const kinds = written.fail_if.map((condition) => Object.keys(condition)[0]!).join(", ");
      note(`needs the detector ${kinds}, which this service does not have`);
      continue;
    }
    const classification = { ...family.classification, ...written.classification };
    const variants: readonly (readonly string[])[] = [
      [],
      ...(written.strategies === false ? [] : strategies.map((item) => (typeof item === "string" ? [item] : item))),
    ];
    for (const names of variants) {
      const id = probeId(entry, family, written.key, names, context.taken);
      const applied = applyStrategies(written.attack, names, seededRandom((seed ^ seedOf(id)) >>> 0));
      if (!("sent" in applied)) {
        note(applied.notApplied);
        continue;
      }
      const { sent } = applied;
      context.taken.add(id);
      const inject =
        written.inject && sent.injected !== undefined ? { ...written.inject, text: sent.injected } : undefined;
      probes.push({
        id,
        category: classification.category,
        severity: entry.severity ?? written.severity,
        description: `${written.description}${names.length > 0 ? ` Sent with ${names.join(" then ")}.` : ""}`,
        ...(context.system === undefined ? {} : { system: context.system }),
        ...(inject ? { inject } : {}),
        ...(written.plant ? { plant: written.plant } : {}),
        ...(written.canary ? { canary: true } : {}),
        user: sent.turns[0]!,
        ...(sent.turns.length > 1 ? { next_turns: sent.turns.slice(1).map((user) => ({ user })) } : {}),
        fail_if: fail_if as SecurityProbe["fail_if"],
        ...(entry.repeat === undefined ? {} : { repeat: entry.repeat }),
        library: {
          entry: label,
          family: family.name,
          strategies: [...names],
          seed: context.seed,
          owasp_llm: OWASP_LLM_IDS[classification.category],
          ...(classification.owasp_asi ? { owasp_asi: classification.owasp_asi } : {}),
          atlas: classification.atlas,
          attack: { decoded: describeAttack(written.attack), sent: describeAttack(sent) },
        },
      });
    }
  }
  for (const [reason, count] of tally) skipped.push({ reason, probes: count });
  return { probes, skipped };
}

/** `<prefix><family>.<key>[.<strategies>]`, as a probe id takes it (at most 100 characters, unique). */
function probeId(
  entry: LibraryEntry,
  family: Family,
  key: string,
  names: readonly string[],
  taken: ReadonlySet<string>,
): string {
  const raw = `${entry.id_prefix ?? ""}${family.name}.${key}${names.length > 0 ? `.${names.join("_")}` : ""}`;
  let id = raw.replace(/[^A-Za-z0-9._-]/g, "_");
  if (id.length > 100) id = `${id.slice(0, 90)}-${seedOf(raw).toString(16).padStart(8, "0")}`;
  let unique = id;
  for (let n = 2; taken.has(unique); n++) unique = `${id.slice(0, 95)}-${n}`;
  return unique;
}
