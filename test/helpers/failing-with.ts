import { expect } from "@jest/globals";

/**
 * What a promise rejected with, matched by its message. better-sqlite3's native module makes its
 * errors with the SqliteError class of the first test file that loaded it in a jest worker: in
 * another file's realm they are not `instanceof Error`, and `rejects.toThrow` ignores them.
 */
export const failingWith = (pattern: RegExp) => ({ message: expect.stringMatching(pattern) });
