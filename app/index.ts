import type { Probot } from "probot";

/**
 * The GitHub side of assure. Events are verified by Probot before they reach here; for now they
 * are acknowledged and logged, and check runs follow with the release gate.
 */
export function assureApp(app: Probot): void {
  app.onAny(async (context) => {
    const payload = context.payload as { action?: string; repository?: { full_name?: string } };
    app.log.info(
      { delivery: context.id, event: context.name, action: payload.action, repository: payload.repository?.full_name },
      `Received ${context.name}${payload.action ? `.${payload.action}` : ""}`,
    );
  });
}
