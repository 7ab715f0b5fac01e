// The Action's entry, bundled to action/dist/index.cjs: the runner executes it (and it runs the
// Action); a tool that loads it instead, such as @github/local-action, calls the `run()` it exports.
import { run } from "./main.js";

export { run };

declare const require: { main: unknown } | undefined;
declare const module: unknown;
if (typeof require !== "undefined" && require.main === module) void run();
