/**
 * The store's SQL names its parameters as better-sqlite3 does (`@name`, `?`); PostgreSQL numbers
 * them (`$1`). `numberParameters` rewrites a statement once — outside string literals, quoted
 * identifiers and comments — and returns how to bind better-sqlite3's arguments to the numbers.
 */
export interface NumberedStatement {
  text: string;
  /** The values for `$1…$n`, from the arguments a better-sqlite3 statement would take. */
  bind(args: readonly unknown[]): unknown[];
}

type Slot = { kind: "named"; name: string } | { kind: "positional"; index: number };

export function numberParameters(sql: string): NumberedStatement {
  const slots: Slot[] = [];
  const numberOfName = new Map<string, number>();
  let positional = 0;
  let text = "";
  let i = 0;
  while (i < sql.length) {
    const char = sql[i]!;
    const skipped = skipLiteralOrComment(sql, i);
    if (skipped > i) {
      text += sql.slice(i, skipped);
      i = skipped;
    } else if (char === "?") {
      slots.push({ kind: "positional", index: positional++ });
      text += `$${slots.length}`;
      i++;
    } else if (char === "@" && /[A-Za-z_]/.test(sql[i + 1] ?? "")) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))![0];
      let number = numberOfName.get(name);
      if (number === undefined) {
        slots.push({ kind: "named", name });
        number = slots.length;
        numberOfName.set(name, number);
      }
      text += `$${number}`;
      i += 1 + name.length;
    } else {
      text += char;
      i++;
    }
  }
  return {
    text,
    bind(args) {
      const { named, ordered } = splitArguments(args);
      return slots.map((slot) => {
        if (slot.kind === "positional") {
          if (slot.index >= ordered.length) throw new RangeError("Too few parameter values were provided");
          return ordered[slot.index];
        }
        if (!named || !Object.hasOwn(named, slot.name)) throw new RangeError(`Missing named parameter "${slot.name}"`);
        return named[slot.name];
      });
    },
  };
}

/** better-sqlite3's arguments: at most one plain object (the named values); arrays are spread. */
function splitArguments(args: readonly unknown[]): { named: Record<string, unknown> | undefined; ordered: unknown[] } {
  let named: Record<string, unknown> | undefined;
  const ordered: unknown[] = [];
  for (const arg of args) {
    if (Array.isArray(arg)) ordered.push(...(arg as unknown[]));
    else if (isPlainObject(arg)) named = arg;
    else ordered.push(arg);
  }
  return { named, ordered };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Where the literal, quoted identifier or comment starting at `i` ends (or `i` if none starts there). */
function skipLiteralOrComment(sql: string, i: number): number {
  const char = sql[i];
  if (char === "'" || char === '"') {
    let j = i + 1;
    while (j < sql.length) {
      if (sql[j] === char) {
        if (sql[j + 1] === char) {
          j += 2;
        } // a doubled quote inside
        else return j + 1;
      } else j++;
    }
    return sql.length;
  }
  if (char === "-" && sql[i + 1] === "-") {
    const end = sql.indexOf("\n", i);
    return end === -1 ? sql.length : end + 1;
  }
  if (char === "/" && sql[i + 1] === "*") {
    const end = sql.indexOf("*/", i + 2);
    return end === -1 ? sql.length : end + 2;
  }
  return i;
}
