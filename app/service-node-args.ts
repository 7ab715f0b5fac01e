import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The node arguments the service process runs with: package.json `config.node_args`, which
 * `npm start` passes too (V8 heap settings measured with `npm run bench`).
 */
export function readServiceNodeArgs(root: string): string[] {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { config?: { node_args?: string } };
  return (manifest.config?.node_args ?? "").split(/\s+/).filter(Boolean);
}
