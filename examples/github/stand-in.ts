import { createHmac, createPublicKey, createVerify, generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { readBody } from "../agent/server.js";

const require = createRequire(import.meta.url);

interface Operation {
  parameters?: { $ref?: string; name?: string; in?: string; required?: boolean; schema?: unknown }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema: unknown }> };
}
interface GitHubDescription {
  paths: Record<string, Record<string, Operation>>;
  components: {
    parameters: Record<string, { name: string; in: string; required?: boolean; schema: unknown }>;
    schemas: Record<string, unknown>;
  };
}

/** GitHub's published OpenAPI description, read once for every stand-in of a test file. */
let description: GitHubDescription | undefined;
let ajv: Ajv2020 | undefined;
function githubDescription() {
  description ??= require("@octokit/openapi/generated/api.github.com.json") as GitHubDescription;
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
    ajv.addSchema({ $id: "github", components: description.components }, "github");
  }
  return { description, ajv };
}

export interface StandInCheckRun {
  id: number;
  name: string;
  head_sha: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  external_id: string | null;
  details_url: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  annotations: {
    path: string;
    start_line: number;
    end_line: number;
    annotation_level: string;
    message: string;
    title?: string;
    raw_details?: string;
  }[];
  actions: { label: string; description: string; identifier: string }[];
  /** Every request that carried annotations, with how many. */
  annotationRequests: number[];
  started_at: string | null;
  completed_at: string | null;
}

interface Repository {
  id: number;
  full_name: string;
  default_branch: string;
  /** Files at each commit. */
  commits: Map<string, Map<string, Buffer>>;
  /** Each commit's parents, when it was committed (for compare and the commit list), and by whom (a GitHub login). */
  history: Map<string, { parents: string[]; committed_at: string; author?: string | undefined }>;
  checkRuns: StandInCheckRun[];
  permissions: Map<string, "admin" | "write" | "read" | "none">;
  /** Pull requests by number: who opened them, and (when the test says) their head and base. */
  pullRequests: Map<number, StandInPullRequest>;
  /** Branches by name: the commit at their tip. */
  branches: Map<string, string>;
  /** The App's installation that reaches the repository; null when the App is not installed on it. */
  installationId: number | null;
}

/** A pull request as the stand-in knows it; `head` and `base` are needed where the App asks GitHub for a commit's pull requests. */
export interface StandInPullRequest {
  author: string;
  head?: { sha: string; ref: string; repo?: { id: number; full_name: string } | null };
  base?: { sha: string; ref?: string };
  state?: "open" | "closed";
}

/**
 * A GitHub API stand-in on a real port, for the tests and the demo, for the App to talk to as to GitHub Enterprise Server
 * (`GHE_HOST`): the App's token exchange (its JWT verified with the key pair made here), repository
 * contents and trees at a commit, and check runs, which refuse a status or conclusion change once
 * completed, as GitHub does. Every request is checked against GitHub's published OpenAPI
 * description (`@octokit/openapi`); what does not match is answered 422 and listed in `problems`.
 */
export async function startGitHubStandIn({
  appId = 123456,
  checkRequests = true,
}: { appId?: number; checkRequests?: boolean } = {}) {
  const { description, ajv } = githubDescription();
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const appKey = createPublicKey(publicKey);
  const problems: string[] = [];
  const requests: { method: string; path: string; body: unknown }[] = [];
  const tokens = new Set<string>();
  const repositories = new Map<string, Repository>();
  let nextCheckRunId = 1;
  const webhookSecret = `whsec-${randomBytes(8).toString("hex")}`;

  const compiled = new Map<string, ReturnType<Ajv2020["compile"]>>();
  const compile = (key: string, schema: () => object) => {
    let validate = compiled.get(key);
    if (!validate) compiled.set(key, (validate = ajv.compile(schema())));
    return validate;
  };

  const templates = Object.keys(description.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "([^/]+)")}$`),
    names: [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
  }));

  /** Checks a request against the description; returns the operation's template and path parameters. */
  function check(method: string, path: string, query: URLSearchParams, body: unknown) {
    // Longer templates first, so that /repos/{owner}/{repo}/check-runs/{id} wins over shorter ones.
    const matches = templates.filter((t) => t.pattern.test(path) && description.paths[t.template]![method]);
    const found = matches.sort((a, b) => b.names.length - a.names.length || b.template.length - a.template.length)[0];
    if (!found) {
      problems.push(`${method.toUpperCase()} ${path}: no such operation in GitHub's API`);
      return undefined;
    }
    const operation = description.paths[found.template]![method]!;
    const values = found.pattern.exec(path)!.slice(1).map(decodeURIComponent);
    const params = Object.fromEntries(found.names.map((name, i) => [name, values[i]!]));
    const declared = (operation.parameters ?? []).map((p) =>
      p.$ref ? description.components.parameters[p.$ref.split("/").at(-1)!]! : p,
    );
    const fail = (what: string) => problems.push(`${method.toUpperCase()} ${found.template}: ${what}`);
    for (const parameter of declared) {
      const raw =
        parameter.in === "path"
          ? params[parameter.name!]
          : parameter.in === "query"
            ? (query.get(parameter.name!) ?? undefined)
            : undefined;
      if (parameter.in !== "path" && parameter.in !== "query") continue;
      if (raw === undefined) {
        if (parameter.required) fail(`missing ${parameter.in} parameter ${parameter.name}`);
        continue;
      }
      const schema = parameter.schema as { type?: string };
      const value =
        schema.type === "integer" || schema.type === "number"
          ? Number(raw)
          : schema.type === "boolean"
            ? raw === "true"
            : raw;
      const validate = compile(`${method} ${found.template} ${parameter.in} ${parameter.name}`, () => ({
        ...(parameter.schema as object),
      }));
      if (!validate(value)) {
        fail(`${parameter.in} parameter ${parameter.name}=${raw}: ${ajv.errorsText(validate.errors)}`);
      }
    }
    for (const name of query.keys()) {
      if (!declared.some((p) => p.in === "query" && p.name === name)) fail(`unknown query parameter ${name}`);
    }
    const bodySchema = operation.requestBody?.content?.["application/json"]?.schema;
    if (bodySchema && body === undefined) {
      if (operation.requestBody?.required) fail("missing its body");
    } else if (bodySchema) {
      const validate = compile(`${method} ${found.template} body`, () => ({
        $ref: "#/definitions/body",
        definitions: { body: rebase(bodySchema) },
      }));
      if (!validate(body)) fail(`body: ${ajv.errorsText(validate.errors)}`);
    } else if (body !== undefined) fail("a body where the operation takes none");
    return { template: found.template, params };
  }

  /** The operation, without checking the request (the bench measures the service, not the stand-in). */
  function route(method: string, path: string) {
    const found = templates
      .filter((t) => t.pattern.test(path) && description.paths[t.template]![method])
      .sort((a, b) => b.names.length - a.names.length || b.template.length - a.template.length)[0];
    if (!found) return undefined;
    const values = found.pattern.exec(path)!.slice(1).map(decodeURIComponent);
    return { template: found.template, params: Object.fromEntries(found.names.map((name, i) => [name, values[i]!])) };
  }

  /** Apps created from a manifest, by the one-time code their conversion takes; and every manifest received. */
  const manifestCodes = new Map<string, Record<string, unknown>>();
  const manifests: { owner: string | undefined; manifest: Record<string, any> }[] = [];

  /**
   * GitHub's form `POST /settings/apps/new` (or an organization's): it creates the App and sends the
   * browser to the manifest's redirect_url with a code. The App is this stand-in's: its id, key and
   * webhook secret, so that what the service gets from the conversion works here.
   */
  function createAppFromManifest(res: ServerResponse, url: URL, form: URLSearchParams, owner: string | undefined) {
    let manifest: Record<string, any>;
    try {
      manifest = JSON.parse(form.get("manifest") ?? "") as Record<string, any>;
    } catch {
      return json(res, 400, { message: "manifest is not JSON" });
    }
    if (typeof manifest.redirect_url !== "string" || typeof manifest.hook_attributes?.url !== "string") {
      return json(res, 422, { message: "manifest lacks redirect_url or hook_attributes.url" });
    }
    manifests.push({ owner, manifest });
    const code = randomBytes(10).toString("hex");
    const slug = String(manifest.name ?? "app")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-");
    manifestCodes.set(code, {
      id: appId,
      slug,
      node_id: `A_${appId}`,
      name: manifest.name,
      owner: { login: owner ?? "octocat" },
      html_url: `http://${host}/apps/${slug}`,
      permissions: manifest.default_permissions,
      events: manifest.default_events,
      pem: privateKey,
      webhook_secret: webhookSecret,
      client_id: `Iv1.${randomBytes(8).toString("hex")}`,
      client_secret: randomBytes(20).toString("hex"),
    });
    const state = url.searchParams.get("state");
    res
      .writeHead(302, {
        location: `${manifest.redirect_url}?code=${code}${state ? `&state=${encodeURIComponent(state)}` : ""}`,
      })
      .end();
  }

  /** Requests to answer with a 5xx before serving them again: GitHub having a bad moment. */
  const outages: { operation: string; status: number; remaining: number }[] = [];

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      problems.push(`stand-in error: ${String(error)}`);
      if (res.headersSent) res.destroy();
      else json(res, 500, { message: String(error) });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://stand-in");
    const path = url.pathname.replace(/^\/api\/v3/, "");
    const method = (req.method ?? "GET").toLowerCase();
    const text = await readBody(req);
    // GitHub's web side: the App manifest flow's first step is a browser's form post.
    const web = /^(?:\/organizations\/([^/]+))?\/settings\/apps\/new$/.exec(url.pathname);
    if (web && method === "post") return createAppFromManifest(res, url, new URLSearchParams(text), web[1]);
    const body = text ? (JSON.parse(text) as unknown) : undefined;
    requests.push({ method: method.toUpperCase(), path: `${path}${url.search}`, body });
    const problemsBefore = problems.length;
    const operation = checkRequests ? check(method, path, url.searchParams, body) : route(method, path);
    if (!operation) return json(res, 404, { message: "Not Found" });
    if (problems.length > problemsBefore) {
      return json(res, 422, { message: "Validation Failed", errors: problems.slice(problemsBefore) });
    }
    const { template, params } = operation;
    const outage = outages.find((o) => o.remaining > 0 && o.operation === `${method.toUpperCase()} ${template}`);
    if (outage) {
      outage.remaining--;
      return json(res, outage.status, { message: "Server Error" });
    }

    if (template === "/app-manifests/{code}/conversions") {
      const app = manifestCodes.get(params.code!);
      if (!app) return json(res, 404, { message: "Not Found" });
      manifestCodes.delete(params.code!);
      return json(res, 201, app);
    }
    if (template === "/repos/{owner}/{repo}/installation") {
      if (!verifyAppJwt(req.headers.authorization)) {
        return json(res, 401, { message: "A JSON web token could not be decoded" });
      }
      const installed = repositories.get(`${params.owner}/${params.repo}`)?.installationId;
      if (installed === undefined || installed === null) return json(res, 404, { message: "Not Found" });
      return json(res, 200, {
        id: installed,
        app_id: appId,
        target_type: "Organization",
        account: { login: params.owner },
      });
    }
    if (template === "/app/installations/{installation_id}/access_tokens") {
      if (!verifyAppJwt(req.headers.authorization)) {
        return json(res, 401, { message: "A JSON web token could not be decoded" });
      }
      const token = `ghs_${randomBytes(18).toString("hex")}`;
      tokens.add(token);
      return json(res, 201, {
        token,
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        permissions: { checks: "write", contents: "read" },
      });
    }
    const bearer = /^(?:token|bearer) (\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!bearer || !tokens.has(bearer)) return json(res, 401, { message: "Bad credentials" });
    const repository = repositories.get(`${params.owner}/${params.repo}`);
    if (!repository) return json(res, 404, { message: "Not Found" });

    switch (`${method} ${template}`) {
      case "get /repos/{owner}/{repo}":
        return json(res, 200, {
          id: repository.id,
          name: params.repo,
          full_name: repository.full_name,
          default_branch: repository.default_branch,
          private: true,
        });
      case "get /repos/{owner}/{repo}/branches/{branch}": {
        const tip = repository.branches.get(params.branch!);
        if (!tip) return json(res, 404, { message: "Branch not found" });
        return json(res, 200, { name: params.branch, commit: commitItem(repository, tip), protected: false });
      }
      case "get /repos/{owner}/{repo}/commits/{commit_sha}/branches-where-head": {
        if (!repository.history.has(params.commit_sha!)) {
          return json(res, 422, { message: `No commit found for SHA: ${params.commit_sha}` });
        }
        const names = [...repository.branches].filter(([, tip]) => tip === params.commit_sha).map(([name]) => name);
        return json(
          res,
          200,
          names.map((name) => ({ name, commit: { sha: params.commit_sha, url: "" }, protected: false })),
        );
      }
      case "get /repos/{owner}/{repo}/commits/{commit_sha}/pulls": {
        // As GitHub: the open pull requests whose commits include it (here: whose head it is), and the merged one that brought it.
        // A fork's commit is in the repository's network through its pull request.
        const listed = [...repository.pullRequests].filter(([, pull]) => pull.head?.sha === params.commit_sha);
        if (listed.length === 0 && !repository.history.has(params.commit_sha!)) {
          return json(res, 422, { message: `No commit found for SHA: ${params.commit_sha}` });
        }
        return json(
          res,
          200,
          listed.map(([number, pull]) => pullRequestItem(repository, number, pull)),
        );
      }
      case "get /repos/{owner}/{repo}/contents/{path}": {
        const files = repository.commits.get(url.searchParams.get("ref") ?? "");
        const file = files?.get(params.path!);
        if (!file) return json(res, 404, { message: "Not Found" });
        // As GitHub: a file over 1 MB comes without its content; its blob has it.
        const large = file.length > 1024 * 1024;
        return json(res, 200, {
          type: "file",
          encoding: large ? "none" : "base64",
          size: file.length,
          name: params.path!.split("/").at(-1),
          path: params.path,
          content: large ? "" : file.toString("base64"),
          sha: gitBlob(file),
        });
      }
      // GitHub's description names it `{base}...{head}` (Octokit's compareCommitsWithBasehead fills `basehead`).
      case "get /repos/{owner}/{repo}/compare/{base}...{head}": {
        const [baseRef, headRef] = decodeURIComponent(url.pathname.split("/").at(-1)!).split("...") as [
          string,
          string | undefined,
        ];
        if (!headRef || !repository.history.has(baseRef) || !repository.history.has(headRef)) {
          return json(res, 404, { message: "Not Found" });
        }
        const ofBase = new Set(ancestors(repository, baseRef));
        const mergeBase = ancestors(repository, headRef).find((sha) => ofBase.has(sha));
        if (!mergeBase) return json(res, 404, { message: "No common ancestor between these commits." });
        const ahead = ancestors(repository, headRef).filter((sha) => !ofBase.has(sha));
        return json(res, 200, {
          url: "",
          html_url: "",
          status: ahead.length === 0 ? "identical" : "ahead",
          ahead_by: ahead.length,
          behind_by: [...ofBase].filter((sha) => !ancestors(repository, headRef).includes(sha)).length,
          total_commits: ahead.length,
          base_commit: commitItem(repository, baseRef),
          merge_base_commit: commitItem(repository, mergeBase),
          commits: ahead.map((sha) => commitItem(repository, sha)),
        });
      }
      case "get /repos/{owner}/{repo}/pulls/{pull_number}/commits": {
        const pull = repository.pullRequests.get(Number(params.pull_number));
        if (!pull?.head) return json(res, 404, { message: "Not Found" });
        const ofBase = new Set(pull.base?.sha ? ancestors(repository, pull.base.sha) : []);
        const commits = ancestors(repository, pull.head.sha)
          .filter((sha) => !ofBase.has(sha) && repository.history.has(sha))
          .reverse();
        return json(
          res,
          200,
          commits.map((sha) => commitItem(repository, sha)),
        );
      }
      case "get /repos/{owner}/{repo}/pulls/{pull_number}": {
        const pull = repository.pullRequests.get(Number(params.pull_number));
        if (!pull) return json(res, 404, { message: "Not Found" });
        return json(res, 200, {
          number: Number(params.pull_number),
          state: "open",
          user: { login: pull.author, id: 1, type: "User" },
        });
      }
      case "get /repos/{owner}/{repo}/commits": {
        const from = url.searchParams.get("sha") ?? "";
        if (!repository.history.has(from)) return json(res, 404, { message: "Not Found" });
        const perPage = Number(url.searchParams.get("per_page") ?? 30);
        const page = Number(url.searchParams.get("page") ?? 1);
        // As GitHub: every ancestor, newest first.
        const all = ancestors(repository, from).sort((a, b) =>
          repository.history.get(b)!.committed_at.localeCompare(repository.history.get(a)!.committed_at),
        );
        return json(
          res,
          200,
          all.slice((page - 1) * perPage, page * perPage).map((sha) => commitItem(repository, sha)),
        );
      }
      case "get /repos/{owner}/{repo}/git/blobs/{file_sha}": {
        for (const files of repository.commits.values()) {
          for (const bytes of files.values()) {
            if (gitBlob(bytes) === params.file_sha) {
              return json(res, 200, {
                sha: params.file_sha,
                size: bytes.length,
                encoding: "base64",
                content: bytes.toString("base64"),
                url: "",
                node_id: "",
              });
            }
          }
        }
        return json(res, 404, { message: "Not Found" });
      }
      case "get /repos/{owner}/{repo}/git/trees/{tree_sha}": {
        const files = repository.commits.get(params.tree_sha!);
        if (!files) return json(res, 404, { message: "Not Found" });
        const tree = [...files].map(([filePath, bytes]) => ({
          path: filePath,
          mode: "100644",
          type: "blob",
          sha: gitBlob(bytes),
          size: bytes.length,
        }));
        return json(res, 200, { sha: params.tree_sha, truncated: false, tree });
      }
      case "post /repos/{owner}/{repo}/check-runs": {
        const input = body as Record<string, any>;
        const run: StandInCheckRun = {
          id: nextCheckRunId++,
          name: input.name,
          head_sha: input.head_sha,
          status: input.conclusion ? "completed" : (input.status ?? "queued"),
          conclusion: input.conclusion ?? null,
          external_id: input.external_id ?? null,
          details_url: input.details_url ?? null,
          output: {
            title: input.output?.title ?? null,
            summary: input.output?.summary ?? null,
            text: input.output?.text ?? null,
          },
          annotations: [...(input.output?.annotations ?? [])],
          actions: input.actions ?? [],
          annotationRequests: input.output?.annotations?.length ? [input.output.annotations.length] : [],
          started_at: input.started_at ?? new Date().toISOString(),
          completed_at: input.conclusion ? (input.completed_at ?? new Date().toISOString()) : null,
        };
        repository.checkRuns.push(run);
        return json(res, 201, toGitHubCheckRun(run, repository));
      }
      case "patch /repos/{owner}/{repo}/check-runs/{check_run_id}": {
        const run = repository.checkRuns.find((r) => r.id === Number(params.check_run_id));
        if (!run) return json(res, 404, { message: "Not Found" });
        const input = body as Record<string, any>;
        const nextStatus = input.conclusion ? "completed" : (input.status ?? run.status);
        if (
          run.status === "completed" &&
          (nextStatus !== "completed" || (input.conclusion !== undefined && input.conclusion !== run.conclusion))
        ) {
          problems.push(`PATCH check run ${run.id}: it is completed; its status or conclusion cannot change`);
          return json(res, 422, { message: "A completed check run cannot change its status or conclusion" });
        }
        run.status = nextStatus;
        if (input.conclusion) {
          run.conclusion = input.conclusion;
          run.completed_at = input.completed_at ?? new Date().toISOString();
        }
        if (input.output) {
          run.output = {
            title: input.output.title ?? run.output.title,
            summary: input.output.summary ?? run.output.summary,
            text: input.output.text ?? run.output.text,
          };
          if (input.output.annotations?.length) {
            run.annotations.push(...input.output.annotations);
            run.annotationRequests.push(input.output.annotations.length);
          }
        }
        if (input.actions) run.actions = input.actions;
        if (input.details_url) run.details_url = input.details_url;
        if (input.external_id) run.external_id = input.external_id;
        return json(res, 200, toGitHubCheckRun(run, repository));
      }
      case "get /repos/{owner}/{repo}/commits/{ref}/check-runs": {
        const runs = repository.checkRuns.filter(
          (r) =>
            r.head_sha === params.ref &&
            (!url.searchParams.get("check_name") || r.name === url.searchParams.get("check_name")),
        );
        return json(res, 200, {
          total_count: runs.length,
          check_runs: runs.map((r) => toGitHubCheckRun(r, repository)),
        });
      }
      case "get /repos/{owner}/{repo}/collaborators/{username}/permission": {
        const permission = repository.permissions.get(params.username!) ?? "none";
        return json(res, 200, { permission, role_name: permission, user: { login: params.username } });
      }
      default:
        problems.push(`${method.toUpperCase()} ${template}: the stand-in does not serve it`);
        return json(res, 501, { message: "Not implemented by the stand-in" });
    }
  }

  function verifyAppJwt(authorization: string | undefined): boolean {
    const token = /^bearer (\S+)$/i.exec(authorization ?? "")?.[1];
    const [header, payload, signature] = token?.split(".") ?? [];
    if (!header || !payload || !signature) return false;
    const verifier = createVerify("RSA-SHA256");
    verifier.update(`${header}.${payload}`);
    if (!verifier.verify(appKey, Buffer.from(signature, "base64url"))) return false;
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as { iss?: string | number; exp?: number };
    return String(claims.iss) === String(appId) && (claims.exp ?? 0) * 1000 > Date.now();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    host,
    appId,
    privateKey,
    webhookSecret,
    problems,
    requests,
    /** Every App manifest posted to the stand-in's web side, with the organization it was for. */
    manifests,
    /** Where a workflow reaches the REST API (GITHUB_API_URL). */
    apiUrl: `http://${host}/api/v3`,
    /** A token as a workflow's GITHUB_TOKEN is: the REST API accepts it. */
    workflowToken(): string {
      const token = `ghs_${randomBytes(18).toString("hex")}`;
      tokens.add(token);
      return token;
    },
    /** The environment the service needs to act as this App against the stand-in. */
    env: {
      APP_ID: String(appId),
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: webhookSecret,
      GHE_HOST: host,
      GHE_PROTOCOL: "http",
    },
    /** A repository, reached by the App's installation `installationId` (1 unless given; null: the App is not installed on it). */
    addRepository({
      id,
      full_name,
      default_branch = "main",
      installationId = 1,
    }: {
      id: number;
      full_name: string;
      default_branch?: string;
      installationId?: number | null;
    }) {
      repositories.set(full_name, {
        id,
        full_name,
        default_branch,
        commits: new Map(),
        history: new Map(),
        checkRuns: [],
        permissions: new Map(),
        pullRequests: new Map(),
        branches: new Map(),
        installationId,
      });
    },
    /** Installs the App on a repository (`installationId`), or takes it off (null). */
    install(fullName: string, installationId: number | null) {
      repositories.get(fullName)!.installationId = installationId;
    },
    /** Moves a branch to a commit. */
    branch(fullName: string, name: string, sha: string) {
      repositories.get(fullName)!.branches.set(name, sha);
    },
    /**
     * The files of a commit (only what the App reads matters), its parents (the first is the branch
     * it was made on), its time, and the branch whose tip it becomes, if any.
     */
    commit(
      fullName: string,
      sha: string,
      files: Record<string, string | Buffer>,
      {
        parents = [],
        committed_at = new Date().toISOString(),
        branch,
        author,
      }: { parents?: string[]; committed_at?: string; branch?: string; author?: string } = {},
    ) {
      const repository = repositories.get(fullName)!;
      repository.commits.set(
        sha,
        new Map(Object.entries(files).map(([path, content]) => [path, Buffer.from(content)])),
      );
      repository.history.set(sha, { parents, committed_at, author });
      if (branch) repository.branches.set(branch, sha);
    },
    /** A file of a commit, as text. */
    file(fullName: string, sha: string, path: string): string {
      return repositories.get(fullName)!.commits.get(sha)!.get(path)!.toString("utf8");
    },
    /** A pull request, as `GET /repos/{owner}/{repo}/pulls/{pull_number}` shows it (who opened it), and as a commit's pull requests list it (its head and base). */
    pullRequest(fullName: string, number: number, pull: StandInPullRequest) {
      repositories.get(fullName)!.pullRequests.set(number, { state: "open", ...pull });
    },
    setPermission(fullName: string, login: string, permission: "admin" | "write" | "read" | "none") {
      repositories.get(fullName)!.permissions.set(login, permission);
    },
    checkRuns(fullName: string, sha?: string): StandInCheckRun[] {
      return repositories.get(fullName)!.checkRuns.filter((run) => sha === undefined || run.head_sha === sha);
    },
    /** The check run GitHub shows as current for a commit: the newest of that name. */
    currentCheckRun(fullName: string, sha: string, name = "assure/release-gate"): StandInCheckRun | undefined {
      return repositories
        .get(fullName)!
        .checkRuns.filter((run) => run.head_sha === sha && run.name === name)
        .at(-1);
    },
    /** Answers the next `times` requests of an operation ("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}") with `status`. */
    failNext(operation: string, times: number, status = 502) {
      outages.push({ operation, status, remaining: times });
    },
    /**
     * Signs and posts a webhook delivery to the service, as GitHub does. A `pull_request` event is
     * about a pull request GitHub has: the stand-in keeps it (its head and base), as the commit's
     * pull requests then list it.
     */
    async deliver(
      serviceBaseUrl: string,
      event: string,
      payload: unknown,
      { delivery = randomUUID(), path = "/api/github/webhooks" } = {},
    ) {
      const pr =
        event === "pull_request"
          ? (payload as { action?: string; repository?: { full_name?: string }; pull_request?: Record<string, any> })
          : undefined;
      const repository = pr?.repository?.full_name ? repositories.get(pr.repository.full_name) : undefined;
      if (pr?.pull_request && repository) {
        const { number, head, base, user } = pr.pull_request;
        const known = repository.pullRequests.get(number);
        repository.pullRequests.set(number, {
          author: known?.author ?? user?.login ?? "octocat",
          head: {
            sha: head.sha,
            ref: head.ref,
            repo: head.repo ? { id: head.repo.id, full_name: head.repo.full_name } : null,
          },
          base: { sha: base.sha, ref: base.ref },
          state: pr.action === "closed" ? "closed" : "open",
        });
      }
      const body = JSON.stringify(payload);
      const response = await fetch(`${serviceBaseUrl}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": event,
          "x-github-delivery": delivery,
          "x-hub-signature-256": `sha256=${createHmac("sha256", webhookSecret).update(body).digest("hex")}`,
        },
        body,
      });
      return { status: response.status, delivery };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type GitHubStandIn = Awaited<ReturnType<typeof startGitHubStandIn>>;

/** `#/components/schemas/x` → a ref into the schema registered as `github`. */
function rebase(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"github#/components/'));
}

/** A commit and every commit it descends from, nearest first. */
function ancestors(repository: Repository, sha: string): string[] {
  const seen: string[] = [];
  const queue = [sha];
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (seen.includes(next)) continue;
    seen.push(next);
    queue.push(...(repository.history.get(next)?.parents ?? []));
  }
  return seen;
}

function commitItem(repository: Repository, sha: string) {
  const { parents, committed_at, author } = repository.history.get(sha) ?? {
    parents: [],
    committed_at: new Date(0).toISOString(),
  };
  const person = { name: "Dev", email: "dev@example.com", date: committed_at };
  const user = author ? { login: author, id: 1, type: "User" } : null;
  return {
    sha,
    author: user,
    committer: user,
    node_id: `C_${sha}`,
    url: `https://api.github.com/repos/${repository.full_name}/commits/${sha}`,
    html_url: `https://github.com/${repository.full_name}/commit/${sha}`,
    commit: {
      author: person,
      committer: person,
      message: `commit ${sha.slice(0, 7)}`,
      tree: { sha },
      comment_count: 0,
    },
    parents: parents.map((parent) => ({ sha: parent, url: "" })),
  };
}

function pullRequestItem(repository: Repository, number: number, pull: StandInPullRequest) {
  const own = { id: repository.id, full_name: repository.full_name, name: repository.full_name.split("/")[1] };
  return {
    number,
    state: pull.state ?? "open",
    title: `pull request ${number}`,
    user: { login: pull.author, id: 1, type: "User" },
    head: {
      sha: pull.head?.sha,
      ref: pull.head?.ref ?? "feature",
      repo: pull.head?.repo === undefined ? own : pull.head.repo,
    },
    base: { sha: pull.base?.sha, ref: pull.base?.ref ?? repository.default_branch, repo: own },
  };
}

function gitBlob(bytes: Buffer): string {
  return require("node:crypto")
    .createHash("sha1")
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest("hex") as string;
}

function toGitHubCheckRun(run: StandInCheckRun, repository: Repository) {
  return {
    id: run.id,
    head_sha: run.head_sha,
    node_id: `CR_${run.id}`,
    external_id: run.external_id,
    url: `https://api.github.com/repos/${repository.full_name}/check-runs/${run.id}`,
    html_url: `https://github.com/${repository.full_name}/runs/${run.id}`,
    details_url: run.details_url,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.started_at,
    completed_at: run.completed_at,
    output: { ...run.output, annotations_count: run.annotations.length, annotations_url: "" },
    name: run.name,
    check_suite: { id: 1 },
    app: null,
    pull_requests: [],
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
