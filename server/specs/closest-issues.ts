interface UnionIssue {
  code: string;
  path: PropertyKey[];
  errors?: UnionIssue[][];
}

/**
 * The issues with each failed union (`invalid_union`) replaced by those of the option the value
 * came closest to (the fewest issues; the first option on a tie), at their full paths: "Invalid
 * input" says nothing, the closest option's issues say what to fix.
 */
export function closestIssues<I extends UnionIssue>(issues: readonly I[]): I[] {
  return issues.flatMap((issue) => {
    if (issue.code !== "invalid_union" || !issue.errors?.length) return [issue];
    const closest = issue.errors.reduce((best, option) => (option.length < best.length ? option : best));
    if (closest.length === 0) return [issue];
    return closestIssues(closest.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }) as I));
  });
}
