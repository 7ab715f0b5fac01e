/**
 * How deep JSON and YAML values may nest (objects and arrays within each other). Validating,
 * copying or rendering a value is recursive: a value nested thousands deep would exhaust the
 * stack, so it is refused where it comes in.
 */
export const MAX_NESTING = 64;

/**
 * The path to the first place `value` nests deeper than `max`, found without recursion; undefined
 * when it does not.
 */
export function tooDeep(value: unknown, max = MAX_NESTING): (string | number)[] | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: node, path } = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (path.length >= max) return path;
    if (Array.isArray(node)) node.forEach((item, i) => stack.push({ value: item, path: [...path, i] }));
    else for (const [key, item] of Object.entries(node)) stack.push({ value: item, path: [...path, key] });
  }
  return undefined;
}

/**
 * The offset in JSON text at which it nests deeper than `max`, found by scanning its brackets
 * outside strings, before anything parses it (parsing JSON nested millions deep takes seconds).
 */
export function jsonNestingBeyond(text: string, max = MAX_NESTING): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) {
        i++;
      } // a backslash escapes what follows
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}
