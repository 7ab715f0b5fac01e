import { assertActsFor, type Principal } from "../auth/authenticate.js";
import { visibleOr404 } from "../auth/visibility.js";
import { APP_RUN_KEY_PREFIX, type RunSource } from "../contract/index.js";
import { ApiError } from "../errors.js";
import type { ServiceStore } from "../store/service-store.js";

/** Idempotency-Keys under the GitHub App's prefix are its own: no one else may take (or replay) them. */
export function refuseAppRunKey(idempotencyKey: string): void {
  if (!idempotencyKey.startsWith(APP_RUN_KEY_PREFIX)) return;
  throw new ApiError("VALIDATION_FAILED", {
    message: `Idempotency-Keys that start with '${APP_RUN_KEY_PREFIX}' are the GitHub App's: choose another.`,
    details: [{ path: "headers.idempotency-key", message: `may not start with '${APP_RUN_KEY_PREFIX}'` }],
  });
}

/**
 * What a new run (started, or uploaded) is of: the spec version and the environment the key may
 * see, in one project, for a commit of a repository the key acts for, and the agent the environment
 * deploys. 404 for what it may not see.
 */
export async function resolveRunTarget(
  store: ServiceStore,
  principal: Principal,
  body: {
    test_spec_id: string;
    spec_version?: string | undefined;
    environment_id: string;
    source?: RunSource | null | undefined;
  },
) {
  if (body.source) {
    assertActsFor(
      principal,
      body.source.repository,
      (await store.getProject(principal.project_id ?? ""))?.repositories ?? [],
      "body.source.repository",
    );
  }
  const spec = visibleOr404(
    principal,
    await store.getTestSpecHead(body.test_spec_id, body.spec_version),
    body.spec_version === undefined ? "Test spec" : `Version ${body.spec_version} of test spec`,
    body.test_spec_id,
  );
  const environment = await store.getEnvironmentRow(body.environment_id);
  if (!environment || environment.project_id !== spec.project_id) {
    throw new ApiError("NOT_FOUND", {
      message: `Environment '${body.environment_id}' was not found in the test spec's project.`,
    });
  }
  const agent = await store.getAgent(environment.agent_id);
  if (!agent) {
    throw new Error(`Environment ${environment.environment_id} points at missing agent ${environment.agent_id}`);
  }
  return { spec, environment, agent };
}
