/** The public v1 wire format: one set of zod schemas for the server, the App, the Action and the tests. */
export * from "./common.js";
export * from "./errors.js";
export * from "./projects.js";
export * from "./agents.js";
export * from "./environments.js";
export * from "./agent-urls.js";
export * from "../specs/document.js";
export * from "./test-specs.js";
export * from "./runs.js";
export * from "./evidence.js";
export * from "./links.js";
export * from "./trace.js";
export * from "./events.js";
export * from "./deprecations.js";
export * from "./run-keys.js";
export * from "./releases.js";
export * from "./assure-config.js";
