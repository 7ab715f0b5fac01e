import { canSee, type Principal } from "./authenticate.js";
import { ApiError } from "../errors.js";

/**
 * A resource the caller may see, or 404: another project's resources are answered exactly as
 * missing ones, so their existence is never revealed.
 */
export function visibleOr404<T extends { project_id: string }>(
  principal: Principal,
  resource: T | undefined,
  what: string,
  id: string,
): T {
  if (!resource || !canSee(principal, resource.project_id)) {
    throw new ApiError("NOT_FOUND", { message: `${what} '${id}' was not found.` });
  }
  return resource;
}

/** The project a list is limited to: a project key's own, or what an admin key asked for (maybe all). */
export function listProjectFilter(principal: Principal, requested: string | undefined): string | undefined {
  if (principal.project_id === null) return requested;
  if (requested !== undefined && requested !== principal.project_id) {
    throw new ApiError("NOT_FOUND", { message: `Project '${requested}' was not found.` });
  }
  return principal.project_id;
}
