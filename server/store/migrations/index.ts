import init from "./0001-init.js";
import engine from "./0002-engine.js";

/** Append-only: never edit a migration that has shipped; add the next number. */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  { version: 1, name: "init", sql: init },
  { version: 2, name: "engine", sql: engine },
];
