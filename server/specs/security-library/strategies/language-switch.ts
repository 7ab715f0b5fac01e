import { withPayload } from "../attack.js";
import { LANGUAGES, phrase, type Language } from "../phrasebook.js";
import { defineStrategy } from "./define.js";

const LANGUAGE_NAMES: Record<(typeof LANGUAGES)[number], string> = {
  fr: "French",
  de: "German",
  es: "Spanish",
  it: "Italian",
  pt: "Portuguese",
};

/** The attack asked in another language, from the built-in phrasebook: a guard trained on English may miss it. */
export const languageSwitch = defineStrategy({
  name: "language-switch",
  description: `What the attack asks, in ${Object.values(LANGUAGE_NAMES).join(", ")} (one picked per probe), from a built-in phrasebook: no translation service is called.`,
  notFor: "attacks the phrasebook has no words for",
  apply(attack, random) {
    if (!attack.intent) return undefined;
    const language: Language = random.pick(LANGUAGES);
    return withPayload(attack, phrase(attack.intent.key, language, attack.intent.vars));
  },
  reveal: (sent) => (sent.intent ? withPayload(sent, phrase(sent.intent.key, "en", sent.intent.vars)) : sent),
});
