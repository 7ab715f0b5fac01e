import { GITHUB_APP_KEY_ID } from "../contract/index.js";
import type { Principal } from "./authenticate.js";
import { SCOPES } from "./scopes.js";

export { GITHUB_APP_KEY_ID };

/** The App acts for the project it gates, as a key of that project with every scope would. */
export const actingForProject = (projectId: string): Principal => ({
  key_id: GITHUB_APP_KEY_ID,
  project_id: projectId,
  scopes: new Set(SCOPES),
});
