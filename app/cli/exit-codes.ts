/**
 * What `assure` exits with (docs/cli.md). `test` exits as the release decision on its runs came
 * out, as the App's check run concludes: allowed, blocked by a failed gate, or blocked only by
 * what could not be decided (inconclusive, or an error). 64 and up: the command could not run as asked.
 */
export const EXIT = {
  /** The decision allowed the release; `validate`: nothing wrong; any command that did what it was asked. */
  allowed: 0,
  /** A gate failed (or nothing was tested); `validate`: a problem was found. */
  blocked: 1,
  /** Blocked only by inconclusive gates or runs that could not be judged; or the command failed unexpectedly. */
  error: 2,
  /** The command line is wrong: an unknown command or option, a missing or bad value. */
  usage: 64,
  /** A file it was given cannot be used: a spec, a table, the config, an env file or endpoint file that is missing or invalid. */
  invalidInput: 65,
  /** Stopped by Ctrl-C (SIGINT) before it finished. */
  interrupted: 130,
} as const;

export class UsageError extends Error {
  override name = "UsageError";
}

/** A file the command was given is missing or invalid; the message names it (and its line). */
export class InputError extends Error {
  override name = "InputError";
}
