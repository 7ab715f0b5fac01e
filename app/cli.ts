// The package's bin, `assure`: dispatches to a command. Each command's module is loaded only when
// it is the one asked for, so `--help` and the operator's commands start without the run engine.
import { EXIT } from "./cli/exit-codes.js";
import { COMMAND_HELP, MAIN_HELP, packageVersion, type CommandName } from "./cli/help.js";

const COMMANDS: Record<CommandName, (argv: string[]) => Promise<number>> = {
  test: async (argv) => (await import("./cli/test/test-command.js")).testCommand(argv),
  validate: async (argv) => (await import("./cli/validate-command.js")).validateCommand(argv),
  init: async (argv) => (await import("./cli/init-command.js")).initCommand(argv),
  keys: async (argv) => (await import("./cli/operator.js")).runOperatorCommand(["keys", ...argv]),
  pages: async (argv) => (await import("./cli/operator.js")).runOperatorCommand(["pages", ...argv]),
  secrets: async (argv) => (await import("./cli/operator.js")).runOperatorCommand(["secrets", ...argv]),
  db: async (argv) => (await import("./cli/db-copy.js")).runDbCommand(argv),
};

const isCommand = (name: string | undefined): name is CommandName =>
  name !== undefined && Object.hasOwn(COMMANDS, name);
const asksForHelp = (argv: readonly string[]) => argv.includes("--help") || argv.includes("-h");

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--version" || first === "-v") {
    console.log(packageVersion());
    return EXIT.allowed;
  }
  if (first === undefined || first === "--help" || first === "-h") {
    console.log(MAIN_HELP);
    return EXIT.allowed;
  }
  if (first === "help") {
    const about = rest[0];
    if (about !== undefined && !isCommand(about)) return unknownCommand(about);
    console.log(about === undefined ? MAIN_HELP : COMMAND_HELP[about]);
    return EXIT.allowed;
  }
  if (!isCommand(first)) return unknownCommand(first);
  // Until `--`, a help flag anywhere asks for the command's help (`assure test --agent x --help`).
  const options = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (asksForHelp(options)) {
    console.log(COMMAND_HELP[first]);
    return EXIT.allowed;
  }
  return COMMANDS[first](rest);
}

function unknownCommand(name: string): number {
  console.error(`assure: unknown command '${name}'\n\n${MAIN_HELP}`);
  return EXIT.usage;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = EXIT.error;
  },
);
