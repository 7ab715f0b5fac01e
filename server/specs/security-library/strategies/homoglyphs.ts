import { encodingStrategy } from "./define.js";

/** Latin letters and the Cyrillic letters that look the same. */
const LOOKALIKES: Record<string, string> = {
  a: "\u0430",
  c: "\u0441",
  e: "\u0435",
  i: "\u0456",
  o: "\u043e",
  p: "\u0440",
  x: "\u0445",
  y: "\u0443",
  A: "\u0410",
  B: "\u0412",
  C: "\u0421",
  E: "\u0415",
  H: "\u041d",
  K: "\u041a",
  M: "\u041c",
  O: "\u041e",
  P: "\u0420",
  T: "\u0422",
  X: "\u0425",
};
const LATIN = Object.fromEntries(Object.entries(LOOKALIKES).map(([latin, cyrillic]) => [cyrillic, latin]));
const LATIN_LETTERS = new RegExp(`[${Object.keys(LOOKALIKES).join("")}]`, "g");
const CYRILLIC_LETTERS = new RegExp(`[${Object.values(LOOKALIKES).join("")}]`, "g");

/** Read back exactly when the attack had none of these Cyrillic letters of its own. */
export const homoglyphs = encodingStrategy({
  name: "homoglyphs",
  description:
    "The attack with Latin letters swapped for the Cyrillic letters that look the same: it reads the same to a person and an agent, not to a keyword filter.",
  encode: (text) => text.replace(LATIN_LETTERS, (letter) => LOOKALIKES[letter]!),
  decode: (text) => text.replace(CYRILLIC_LETTERS, (letter) => LATIN[letter]!),
  preambles: [],
});
