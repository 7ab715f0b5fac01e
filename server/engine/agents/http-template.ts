import { placeholdersIn, type RequestPlaceholder } from "../../contract/index.js";

export type PlaceholderValues = Readonly<Record<RequestPlaceholder, unknown>>;

const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;
const ANY = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

const asText = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value ?? null));

/** A text with its placeholders written in: strings as they are, other values as JSON. */
export function fillText(text: string, values: PlaceholderValues, encode: (text: string) => string = (t) => t): string {
  return text.replace(ANY, (_match, name: string) => encode(asText(values[name as RequestPlaceholder])));
}

/**
 * A request template's JSON body with its placeholders filled: a string that is exactly one
 * placeholder takes the value with its JSON type (`"{{messages}}"` becomes the array); in longer
 * text the value is written in (its JSON escaping is the body's when it is sent).
 */
export function fillBody(template: unknown, values: PlaceholderValues): unknown {
  if (typeof template === "string") {
    const whole = WHOLE.exec(template);
    if (whole) return values[whole[1] as RequestPlaceholder] ?? null;
    return placeholdersIn(template).length > 0 ? fillText(template, values) : template;
  }
  if (Array.isArray(template)) return template.map((item) => fillBody(item, values));
  if (template && typeof template === "object") {
    return Object.fromEntries(
      Object.entries(template).map(([key, item]) => [fillText(key, values), fillBody(item, values)]),
    );
  }
  return template;
}
