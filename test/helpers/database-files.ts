import { existsSync, readFileSync } from "node:fs";

/** Every byte SQLite keeps for a database: the file, its WAL and its shared-memory index. */
export const databaseBytes = (dbPath: string) =>
  Buffer.concat([dbPath, `${dbPath}-wal`, `${dbPath}-shm`].filter(existsSync).map((path) => readFileSync(path)));
