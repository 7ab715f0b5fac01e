import type { ReleaseDecision, RepositoryBinding } from "../contract/index.js";

/**
 * The GitHub App, as the API reaches it (app/ provides it when the App is configured). For a
 * repository the App gates — bound to a project and reachable through the App's installation — a
 * commit's decision is planned by the App from what GitHub says, never from a request body: a
 * request may only ask for the commit to be gated, and gets the decision the App makes.
 */
export interface CommitGate {
  /** Whether the App plans the decisions of this repository's commits. Throws GITHUB_UNAVAILABLE when GitHub cannot say. */
  gates(repository: RepositoryBinding): Promise<boolean>;
  /**
   * Gates the commit now, as a delivery about it would (a new attempt when `rerun`): the decision,
   * and whether it was made now. Throws COMMIT_NOT_GATED saying why when the App cannot gate it (its
   * config is missing or wrong, a fork's runs wait for an approval, the config names another project).
   */
  gate(
    projectId: string,
    repository: RepositoryBinding,
    commitSha: string,
    options: { rerun: boolean },
  ): Promise<{ decision: ReleaseDecision; created: boolean }>;
}
