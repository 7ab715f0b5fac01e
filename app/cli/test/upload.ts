import type { Run, UploadRunBody } from "../../../server/contract/index.js";
import { contentAddress } from "../../../server/specs/canonical-json.js";
import type { ServiceStore } from "../../../server/store/service-store.js";
import { uploadContents } from "../../../server/local/upload-contents.js";

/** Where to send runs and as whom: `--upload URL`, `ASSURE_TOKEN`, and what the service knows them by. */
export interface UploadTarget {
  /** The service's base URL, as the Action's api-url. */
  baseUrl: string;
  token: string;
  /** The service's environment the runs stand for (its name or id). */
  environment: string;
  /** The project, for a key not bound to one. */
  projectId: string | undefined;
  source: { repository: string; commit_sha: string } | undefined;
}

const PAGE = 200;

class UploadError extends Error {
  override name = "UploadError";
}

/** One call of the service's API: its JSON, or an UploadError with the error envelope's code and message. */
async function call<T>(target: UploadTarget, method: string, path: string, body?: unknown, key?: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${target.baseUrl.replace(/\/+$/, "")}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(key ? { "idempotency-key": key } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new UploadError(`${method} ${path}: the service cannot be reached: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) {
    let error: { code?: string; message?: string; details?: { path: string; message: string }[] } = {};
    try {
      error = (JSON.parse(text) as { error: typeof error }).error ?? {};
    } catch {
      // not the service's envelope
    }
    const detail = error.details?.[0] ? ` (${error.details[0].path}: ${error.details[0].message})` : "";
    throw new UploadError(
      `${method} ${path}: ${response.status} ${error.code ?? ""} ${error.message ?? text.slice(0, 200)}${detail}`,
    );
  }
  return JSON.parse(text) as T;
}

/** Every item of a list route, page by page. */
async function listAll<T>(target: UploadTarget, path: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({
      limit: String(PAGE),
      ...(target.projectId ? { project_id: target.projectId } : {}),
      ...(cursor ? { cursor } : {}),
    });
    const page: { data: T[]; next_cursor: string | null } = await call(target, "GET", `${path}?${query}`);
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

/**
 * Sends each run to the service (`POST /v1/runs/uploads`), for the service's spec of the same name
 * at the same version and the environment named: the service checks and judges it. Returns a line
 * per run: where it is, or why it was refused.
 */
export async function uploadRuns(
  store: ServiceStore,
  target: UploadTarget,
  runs: readonly { run: Run; name: string }[],
): Promise<{ lines: string[]; refused: boolean }> {
  const lines: string[] = [];
  let refused = false;
  try {
    const specs = await listAll<{ test_spec_id: string; name: string }>(target, "/v1/test-specs");
    const environments = await listAll<{ environment_id: string; name: string }>(target, "/v1/environments");
    const environment = environments.find(
      (e) => e.name === target.environment || e.environment_id === target.environment,
    );
    if (!environment) throw new UploadError(`the service has no environment '${target.environment}' in the project`);
    for (const { run, name } of runs) {
      const spec = specs.find((s) => s.name === name);
      if (!spec) {
        refused = true;
        lines.push(`  ${name}: not uploaded: the service has no test spec named '${name}' in the project`);
        continue;
      }
      const body: UploadRunBody = {
        test_spec_id: spec.test_spec_id,
        spec_version: run.spec_version,
        environment_id: environment.environment_id,
        ...(target.source ? { source: target.source } : {}),
        ...(await uploadContents(store, run.run_id)),
      };
      try {
        const uploaded = await call<Run>(target, "POST", "/v1/runs/uploads", body, `upload-${contentAddress(body)}`);
        lines.push(
          `  ${name}: ${target.baseUrl.replace(/\/+$/, "")}${uploaded.links.self} (executor: local; the service judges it)`,
        );
      } catch (error) {
        refused = true;
        lines.push(`  ${name}: not uploaded: ${(error as Error).message}`);
      }
    }
  } catch (error) {
    if (!(error instanceof UploadError)) throw error;
    return { lines: [`  ${error.message}`], refused: true };
  }
  return { lines, refused };
}
