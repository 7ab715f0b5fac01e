const LEADING_FLAGS = /^\(\?([ims]+)\)/;

/**
 * Compiles a spec's `matches` pattern. Specs are often written with PCRE-style leading inline
 * flags (`(?i)refund`), which JavaScript's RegExp does not accept; they become RegExp flags.
 */
export function compilePattern(source: string): RegExp {
  const flags = LEADING_FLAGS.exec(source);
  if (!flags) return new RegExp(source, "u");
  return new RegExp(source.slice(flags[0].length), `${[...new Set(flags[1])].join("")}u`);
}

export function patternError(source: string): string | undefined {
  try {
    compilePattern(source);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
