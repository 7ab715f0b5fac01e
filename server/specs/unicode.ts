/**
 * The path to the first string, value or key, in `value` that is not well-formed Unicode: a lone
 * surrogate, which JSON's `\ud800` escape and YAML's "\ud800" can write but UTF-8 cannot carry and
 * canonical JSON (RFC 8785, I-JSON) refuses. Found without recursion; undefined when there is none.
 */
export function loneSurrogateAt(value: unknown): (string | number)[] | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: node, path } = stack.pop()!;
    if (typeof node === "string") {
      if (!node.isWellFormed()) return path;
      continue;
    }
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      node.forEach((item, i) => stack.push({ value: item, path: [...path, i] }));
      continue;
    }
    for (const [key, item] of Object.entries(node)) {
      if (!key.isWellFormed()) return [...path, key];
      stack.push({ value: item, path: [...path, key] });
    }
  }
  return undefined;
}

export const LONE_SURROGATE = "is not well-formed Unicode: it holds a lone surrogate (\\ud800–\\udfff)";
