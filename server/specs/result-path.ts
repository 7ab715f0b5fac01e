/**
 * Puts a value at a field of a tool's mocked result: a key, or a dotted path into it (`order.notes`,
 * `items.0.name`; a number indexes a list). A key the object has as written, dots and all, is that key.
 * Missing objects on the way are made; the result is changed in place. False when the path runs
 * into a value that is not an object or a list (the result is left as it was).
 */
export function setAtPath(result: unknown, path: string, value: unknown): boolean {
  if (!isContainer(result)) return false;
  if (!Array.isArray(result) && Object.hasOwn(result, path)) {
    result[path] = value;
    return true;
  }
  const segments = path.split(".");
  if (segments.includes("__proto__")) return false;
  let at: Record<string, unknown> | unknown[] = result;
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    if (Array.isArray(at)) {
      const index = Number(segment);
      if (!/^\d+$/.test(segment) || index >= at.length) return false;
      if (last) {
        at[index] = value;
        return true;
      }
      const next: unknown = at[index];
      if (!isContainer(next)) return false;
      at = next;
      continue;
    }
    if (last) {
      at[segment] = value;
      return true;
    }
    const next: unknown = Object.hasOwn(at, segment) ? at[segment] : (at[segment] = {});
    if (!isContainer(next)) return false;
    at = next;
  }
  return false;
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return value !== null && typeof value === "object";
}

/** Every string field of a result, as the dotted paths `setAtPath` takes: where an injection can hide. */
export function stringPaths(result: unknown, prefix = "", out: string[] = [], depth = 0): string[] {
  if (depth > 8 || out.length >= 200) return out;
  if (typeof result === "string" && prefix) out.push(prefix);
  else if (isContainer(result)) {
    for (const [key, value] of Object.entries(result)) {
      if (key.includes(".") || key === "__proto__") continue;
      stringPaths(value, prefix ? `${prefix}.${key}` : key, out, depth + 1);
    }
  }
  return out;
}
