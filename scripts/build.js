// Bundles the service's entry points into build/ with esbuild (dependencies stay in node_modules),
// and the GitHub Action into action/dist/index.cjs (everything inside: a runner has no node_modules).
import { build } from "esbuild";
import { chmodSync, copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ENTRY_POINTS = {
  "app/main": "app/main.ts",
  "store/writer-thread": "server/store/writer/writer-thread.ts",
  "webhooks/sender-thread": "server/webhooks/sender-thread.ts",
  "app/cli": "app/cli.ts",
  // The CLI's commands, each loaded by build/app/cli.js only when it is the one run (cliCommands below).
  "app/cli-test": "app/cli/test/test-command.ts",
  "app/cli-validate": "app/cli/validate-command.ts",
  "app/cli-init": "app/cli/init-command.ts",
  "app/cli-operator": "app/cli/operator.ts",
  "app/cli-db": "app/cli/db-copy.ts",
  "examples/agent/main": "examples/agent/main.ts",
  "examples/demo": "examples/demo.ts",
  "examples/webhook-consumer": "examples/webhook-consumer.ts",
  // Libraries of the bench: the GitHub stand-in and the webhook payloads it sends.
  "examples/github/stand-in": "examples/github/stand-in.ts",
  "examples/github/events": "examples/github/events.ts",
};

/**
 * app/cli.ts imports each command with `import("./cli/…")`. Bundled inline, every command's
 * packages would load when any command starts (esbuild hoists their imports): instead each
 * command is an entry of its own beside build/app/cli.js, imported from there at run time.
 */
const cliCommands = {
  name: "cli-commands",
  setup(build) {
    const COMMANDS = {
      "./cli/test/test-command.js": "./cli-test.js",
      "./cli/validate-command.js": "./cli-validate.js",
      "./cli/init-command.js": "./cli-init.js",
      "./cli/operator.js": "./cli-operator.js",
      "./cli/db-copy.js": "./cli-db.js",
    };
    build.onResolve({ filter: /^\.\/cli\// }, (args) =>
      args.importer.endsWith(join("app", "cli.ts")) && args.kind === "dynamic-import" && COMMANDS[args.path]
        ? { path: COMMANDS[args.path], external: true }
        : undefined,
    );
  },
};

export async function buildService({ root = fileURLToPath(new URL("..", import.meta.url)) } = {}) {
  rmSync(join(root, "build"), { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    outdir: "build",
    bundle: true,
    packages: "external",
    platform: "node",
    target: "node20",
    format: "esm",
    sourcemap: true,
    logLevel: "warning",
    banner: { js: "#!/usr/bin/env node" },
    plugins: [cliCommands],
  });
  // Every entry is a program (the CLI is the package's bin): npx links the bin once, so a rebuild
  // must leave it executable, or `npx assure` fails with "Permission denied" after `npm start`.
  for (const entry of Object.keys(ENTRY_POINTS)) chmodSync(join(root, "build", `${entry}.js`), 0o755);
  // The reader threads, run by piscina, which loads its script with require(): CommonJS, with
  // what it uses inside (Node 20's require() of an ES module can crash when two calls load it at once).
  for (const [entry, outfile] of [
    ["server/spec-reader/reader-thread.ts", "build/specs/reader-thread.cjs"],
    // The OTLP trace reader's thread, likewise; the OpenTelemetry package's generated module stays in
    // node_modules (required by path from import.meta.url, which CommonJS has not: given it below).
    ["server/trace-reader/reader-thread.ts", "build/traces/reader-thread.cjs"],
  ]) {
    await build({
      absWorkingDir: root,
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: "node",
      target: "node20",
      format: "cjs",
      sourcemap: true,
      logLevel: "warning",
      define: { "import.meta.url": "__importMetaUrl" },
      banner: { js: 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    });
  }
}

/**
 * The Action's bundle, committed (action.yml runs it): CommonJS, since @actions/core and
 * @actions/github are ESM-only and an ESM bundle of them fails on dynamic requires. Deterministic,
 * so CI can rebuild it and fail on a difference.
 */
export async function buildAction({ root = fileURLToPath(new URL("..", import.meta.url)) } = {}) {
  await build({
    absWorkingDir: root,
    entryPoints: ["action/src/index.ts"],
    outfile: "action/dist/index.cjs",
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    legalComments: "eof",
    logLevel: "warning",
    // The engine (in-job runs) finds files by import.meta.url, which CommonJS lacks: the bundle's own URL.
    define: { "import.meta.url": "__importMetaUrl" },
    banner: { js: 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
  // In-job runs keep their store in SQLite compiled to WebAssembly: sql.js loads its .wasm from
  // beside the bundle.
  const wasm = join(root, "action/dist/sql-wasm.wasm");
  copyFileSync(createRequire(import.meta.url).resolve("sql.js/dist/sql-wasm.wasm"), wasm);
  chmodSync(wasm, 0o644);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildService();
  await buildAction();
}
