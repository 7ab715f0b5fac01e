import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startTestService, type TestService } from "../../helpers/service.js";

const repo = (github_id: number, full_name: string) => ({ github_id, full_name });

describe("a project's repositories", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it("are bound when the project is created, by their numeric id, and read back with it", async () => {
    const created = await t.admin.post("/v1/projects", {
      name: "shop",
      repositories: [repo(20, "acme/shop-ui"), repo(10, "acme/shop")],
    });
    expect(created.status).toBe(201);
    expect(created.body.repositories).toEqual([repo(10, "acme/shop"), repo(20, "acme/shop-ui")]);
    expect((await t.admin.get(`/v1/projects/${created.body.project_id}`)).body.repositories).toEqual(
      created.body.repositories,
    );
    const listed = (await t.admin.get("/v1/projects")).body.data.find((p: { name: string }) => p.name === "shop");
    expect(listed.repositories).toEqual(created.body.repositories);
  });

  it("refuses a repository that another project has bound (409), and creates nothing", async () => {
    await t.admin.post("/v1/projects", { name: "owner", repositories: [repo(30, "acme/payments")] });
    const refused = await t.admin.post("/v1/projects", {
      name: "thief",
      repositories: [repo(31, "acme/other"), repo(30, "acme/payments")],
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("acme/payments (30)"),
    });
    expect((await t.admin.get("/v1/projects?limit=200")).body.data.map((p: { name: string }) => p.name)).not.toContain(
      "thief",
    );
    expect((await t.admin.post("/v1/projects", { name: "thief", repositories: [repo(31, "acme/other")] })).status).toBe(
      201,
    );
  });

  it("are replaced whole by PATCH: the ones left out are unbound and free to bind elsewhere", async () => {
    const first = (
      await t.admin.post("/v1/projects", { name: "first", repositories: [repo(40, "acme/a"), repo(41, "acme/b")] })
    ).body;
    const second = (await t.admin.post("/v1/projects", { name: "second" })).body;
    expect(
      (
        await t.admin.call("PATCH", `/v1/projects/${second.project_id}`, {
          json: { repositories: [repo(41, "acme/b")] },
        })
      ).status,
    ).toBe(409);

    const patched = await t.admin.call("PATCH", `/v1/projects/${first.project_id}`, {
      json: { repositories: [repo(40, "acme/a-renamed")] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.repositories).toEqual([repo(40, "acme/a-renamed")]); // the binding follows the id; the name is updated
    const moved = await t.admin.call("PATCH", `/v1/projects/${second.project_id}`, {
      json: { repositories: [repo(41, "acme/b")], description: "now with b" },
    });
    expect(moved.body).toMatchObject({ description: "now with b", repositories: [repo(41, "acme/b")] });
    expect(
      (await t.admin.call("PATCH", `/v1/projects/${first.project_id}`, { json: { description: null } })).body,
    ).toMatchObject({
      description: null,
      repositories: [repo(40, "acme/a-renamed")],
    });
  });

  it("refuses bad changes with a clear error, and changes nothing", async () => {
    const project = (await t.admin.post("/v1/projects", { name: "strict", repositories: [repo(50, "acme/strict")] }))
      .body;
    const patch = (json: unknown, token?: string) =>
      t.admin.call("PATCH", `/v1/projects/${project.project_id}`, { json, ...(token ? { token } : {}) });
    for (const [body, path] of [
      [{ repositories: [repo(51, "x"), repo(51, "y/z")] }, "body.repositories"],
      [{ repositories: [{ github_id: -1, full_name: "acme/x" }] }, "body.repositories[0].github_id"],
      [{ repositories: [{ github_id: 52, full_name: "not a name" }] }, "body.repositories[0].full_name"],
      [{ owner: "me" }, "body.owner"],
    ] as const) {
      const refused = await patch(body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await patch({})).status).toBe(400);
    expect((await t.admin.call("PATCH", "/v1/projects/prj_missing", { json: { description: "x" } })).status).toBe(404);
    const projectKey = await t.issueKey(project.project_id, ["projects:read"]);
    expect((await patch({ description: "mine" }, projectKey)).status).toBe(403);
    expect((await t.admin.get(`/v1/projects/${project.project_id}`)).body).toMatchObject({
      description: null,
      repositories: [repo(50, "acme/strict")],
    });
  });
});
