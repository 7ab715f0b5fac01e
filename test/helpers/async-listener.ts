import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";

/**
 * A request listener for node:http that answers with an async handler. A handler that fails
 * answers 500 with its error (or, its answer begun, ends the connection): the failure shows in
 * what the caller gets, and is never an unhandled rejection.
 */
export function asyncListener(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): RequestListener {
  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy(error instanceof Error ? error : new Error(String(error)));
      else res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(String(error));
    });
  };
}
