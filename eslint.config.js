// Lint: typescript-eslint's recommended rules, no import cycle between files, and the architecture's
// import boundaries. Formatting is Prettier's (`npm run format:check`); eslint-config-prettier turns
// off every rule that would argue with it.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import importX from "eslint-plugin-import-x";
import globals from "globals";
import tseslint from "typescript-eslint";

/** Where each part of the house may not reach, as regular expressions over import specifiers. */
const boundaries = [
  {
    files: ["server/**/*.{ts,tsx}"],
    patterns: [
      {
        regex: "^(\\.\\./)+(app|action)/",
        message: "server/ is the service: it never imports the App or the Action.",
      },
    ],
  },
  {
    files: ["action/src/**/*.ts"],
    ignores: ["action/src/in-job.ts"],
    patterns: [
      {
        regex: "^(\\.\\./)+server/(?!contract/|specs/|releases/|spec-reader/read-spec)",
        message:
          "The Action bundles only pure modules of the service: the contract, specs and release planning (the engine only in in-job.ts).",
      },
      {
        regex: "^(\\.\\./)+app/(?!repository/)",
        message: "The Action reads a repository as the App does (app/repository), and nothing else of the App.",
      },
    ],
  },
  {
    // In-job runs: the service's engine in the runner, on a WebAssembly SQLite — never the HTTP layer or a native store.
    files: ["action/src/in-job.ts"],
    patterns: [
      {
        regex: "^(\\.\\./)+server/(http|app)/|/store/(?!wasm-db)",
        message:
          "In-job runs use the engine through server/local and the WebAssembly store (store/wasm-db), nothing else of the service.",
      },
    ],
  },
  {
    files: ["server/decisions/**/*.ts", "server/changes/**/*.ts"],
    patterns: [
      {
        regex: "/(store|engine|http)/",
        message: "Decisions are pure: they read what they judge through an interface, never the store.",
      },
    ],
  },
];

const { "import-x/resolver": _legacyResolver, ...importSettings } = importX.flatConfigs.typescript.settings;

export default tseslint.config(
  { ignores: ["build/", "action/dist/", "coverage/", "node_modules/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { "import-x": importX },
    settings: {
      ...importSettings,
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "tsconfig.json" })],
    },
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "import-x/no-cycle": "error",
      // A variable a closure reads before its one assignment (the worker the service starts last).
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
    },
  },
  {
    // A promise is awaited, returned or handed on: the store answers later on a network database,
    // and a promise tested for truth or dropped is a bug the types alone do not catch.
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
    },
  },
  {
    // Tests, benchmarks and example scripts read loose JSON from the API; the product code does not.
    files: ["test/**", "bench/**", "examples/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  ...boundaries.map(({ files, ignores, patterns }) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: { "no-restricted-imports": ["error", { patterns }] },
  })),
  prettier,
  // After Prettier's config: a statement Prettier breaks over lines gets braces.
  { rules: { curly: ["error", "multi-line"] } },
);
