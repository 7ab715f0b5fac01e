import * as core from "@actions/core";
import type { ShortLivedKey } from "../../server/contract/index.js";
import { makeAssureClient } from "./assure-client.js";
import type { GatedCommit } from "./workflow-context.js";

export type SignIn = { kind: "token"; token: string } | { kind: "fork" };

/**
 * The API key the step acts with: the `token` input, or — secretless — the job's GitHub OIDC token
 * for the audience `api-url`, exchanged at the service for a key valid 15 minutes. A fork's pull
 * request gets no OIDC token: the App gates it instead.
 */
export async function signIn(
  apiUrl: string,
  commit: GatedCommit,
  token: string | undefined,
  deadline: number,
): Promise<SignIn> {
  if (token) return { kind: "token", token };
  let idToken: string;
  try {
    idToken = await core.getIDToken(apiUrl);
  } catch (error) {
    if (commit.fork) return { kind: "fork" };
    throw new Error(
      `No GitHub OIDC token for this job (${(error as Error).message}). Give the job \`permissions: id-token: write\` (and contents: read), or pass an assure API key as the \`token\` input.`,
      { cause: error },
    );
  }
  const client = makeAssureClient(apiUrl, { deadline, log: core.info });
  const { body } = await client.post<ShortLivedKey>("/v1/auth/github-oidc", { token: idToken });
  core.setSecret(body.token);
  core.info(
    `Signed in to ${apiUrl} for project ${body.project_id} until ${body.expires_at} (scopes: ${body.scopes.join(", ")})`,
  );
  return { kind: "token", token: body.token };
}
