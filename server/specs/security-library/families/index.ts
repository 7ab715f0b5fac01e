import type { Family } from "./define.js";
import { directInjection } from "./direct-injection.js";
import { excessiveAgency } from "./excessive-agency.js";
import { improperOutputHandling } from "./improper-output-handling.js";
import { indirectInjection } from "./indirect-injection.js";
import { misinformation } from "./misinformation.js";
import { multiTurnEscalation } from "./multi-turn-escalation.js";
import { privilegeEscalation } from "./privilege-escalation.js";
import { sensitiveInformationDisclosure } from "./sensitive-information-disclosure.js";
import { systemPromptLeakage } from "./system-prompt-leakage.js";
import { toolMisuse } from "./tool-misuse.js";
import { unboundedConsumption } from "./unbounded-consumption.js";

export type { Family, FamilyContext, FamilyProbe } from "./define.js";

/** Every family, in the order the docs list them. */
export const FAMILIES = [
  directInjection,
  indirectInjection,
  systemPromptLeakage,
  sensitiveInformationDisclosure,
  excessiveAgency,
  improperOutputHandling,
  unboundedConsumption,
  misinformation,
  toolMisuse,
  privilegeEscalation,
  multiTurnEscalation,
] as const satisfies readonly Family[];
export const FAMILY_NAMES = FAMILIES.map((family) => family.name) as [string, ...string[]];

const BY_NAME = new Map<string, Family>(FAMILIES.map((family) => [family.name, family]));
export const familyNamed = (name: string): Family | undefined => BY_NAME.get(name);
