import { afterEach, describe, expect, it } from "vitest";
import { createTestApp, varsBody, type TestApp } from "../helpers/app.js";
import { STORAGES } from "../helpers/storages.js";

const VARS = "/api/v2/workspaces/ws-a/vars";

describe.each(STORAGES)("workspace variables over HTTP ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = async (options: Parameters<typeof createTestApp>[0] = {}): Promise<TestApp> => {
    const s = setup.create();
    dispose = s.dispose;
    return createTestApp({ ...options, storage: s.storage });
  };
  const create = (a: TestApp, attributes: Record<string, unknown>) => a.call("POST", VARS, { body: varsBody(attributes) });

  it("creates a variable with 201 and fills the defaults", async () => {
    const a = await app();
    const res = await create(a, { key: "region", category: "env" });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
    const data = res.json.data;
    expect(data.type).toBe("vars");
    expect(data.id).toMatch(/^var-[0-9A-Za-z]{16}$/);
    expect(data.attributes).toMatchObject({ key: "region", value: "", category: "env", hcl: false, sensitive: false, description: null });
    expect(data.attributes["created-at"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(data.attributes["version-id"]).toMatch(/^[0-9a-f]+$/);
    expect(data.relationships.configurable.data).toEqual({ type: "workspaces", id: "ws-a" });
    expect(data.relationships.configurable.links.related).toBe("/api/v2/organizations/acme/workspaces/alpha-ws");
    expect(data.links.self).toBe(`${VARS}/${data.id}`);
  });

  it("lists variables without pagination, oldest first", async () => {
    const a = await app();
    for (const key of ["a", "b", "c"]) await create(a, { key, value: key, category: "config" });
    const res = await a.call("GET", VARS);
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: any) => d.attributes.key)).toEqual(["a", "b", "c"]);
    expect(res.json.meta).toBeUndefined();
    expect(res.json.links).toBeUndefined();
  });

  it("shows one variable and answers 404 for unknown ids, unknown workspaces and other workspaces' variables", async () => {
    const a = await app();
    const id = (await create(a, { key: "k", value: "v", category: "env" })).json.data.id;
    expect((await a.call("GET", `${VARS}/${id}`)).json.data.attributes.value).toBe("v");
    const missing = await a.call("GET", `${VARS}/var-doesnotexist0000`);
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    expect((await a.call("GET", `/api/v2/workspaces/ws-b/vars/${id}`)).status).toBe(404);
    expect((await a.call("GET", "/api/v2/workspaces/ws-nope/vars")).status).toBe(404);
    expect((await a.call("POST", "/api/v2/workspaces/ws-nope/vars", { body: varsBody({ key: "k", category: "env" }) })).status).toBe(404);
  });

  it("updates only the attributes sent and changes version-id on every update, even an empty one", async () => {
    const a = await app();
    const created = (await create(a, { key: "k", value: "v", category: "config", description: "d", hcl: true })).json.data;
    const patched = await a.call("PATCH", `${VARS}/${created.id}`, { body: varsBody({ value: "w" }) });
    expect(patched.status).toBe(200);
    expect(patched.json.data.attributes).toMatchObject({ key: "k", value: "w", description: "d", hcl: true, category: "config" });
    expect(patched.json.data.attributes["version-id"]).not.toBe(created.attributes["version-id"]);
    const empty = await a.call("PATCH", `${VARS}/${created.id}`, { body: varsBody({}) });
    expect(empty.status).toBe(200);
    expect(empty.json.data.attributes["version-id"]).not.toBe(patched.json.data.attributes["version-id"]);
    expect(empty.json.data.attributes.value).toBe("w");
  });

  it("accepts a PATCH without data.id and refuses one whose data.id differs from the path (D23)", async () => {
    const a = await app();
    const id = (await create(a, { key: "k", category: "env" })).json.data.id;
    expect((await a.call("PATCH", `${VARS}/${id}`, { body: varsBody({ value: "1" }, { id }) })).status).toBe(200);
    const mismatch = await a.call("PATCH", `${VARS}/${id}`, { body: varsBody({ value: "2" }, { id: "var-other" }) });
    expect(mismatch.status).toBe(409);
    expect(mismatch.json.errors[0].title).toBe("conflict");
    expect((await a.call("GET", `${VARS}/${id}`)).json.data.attributes.value).toBe("1");
  });

  it("deletes with 204 and an empty body, then answers 404", async () => {
    const a = await app();
    const id = (await create(a, { key: "k", category: "env" })).json.data.id;
    const res = await a.call("DELETE", `${VARS}/${id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await a.call("GET", `${VARS}/${id}`)).status).toBe(404);
    expect((await a.call("DELETE", `${VARS}/${id}`)).status).toBe(404);
    expect((await a.call("PATCH", `${VARS}/${id}`, { body: varsBody({ value: "x" }) })).status).toBe(404);
  });

  it("refuses a duplicate key in the same category but allows it in the other category (D12)", async () => {
    const a = await app();
    await create(a, { key: "dup", category: "env" });
    const dup = await create(a, { key: "dup", category: "env" });
    expect(dup.status).toBe(422);
    expect(dup.json.errors[0]).toEqual({
      status: "422",
      title: "invalid attribute",
      detail: "Key has already been taken",
      source: { pointer: "/data/attributes/key" },
    });
    expect((await create(a, { key: "dup", category: "config" })).status).toBe(201);
    expect((await a.call("POST", "/api/v2/workspaces/ws-b/vars", { body: varsBody({ key: "dup", category: "env" }) })).status).toBe(201);
    const other = (await create(a, { key: "other", category: "env" })).json.data.id;
    const rename = await a.call("PATCH", `${VARS}/${other}`, { body: varsBody({ key: "dup" }) });
    expect(rename.status).toBe(422);
    expect(rename.json.errors[0].detail).toBe("Key has already been taken");
  });

  it.each([
    [{ category: "env" }, "/data/attributes/key", "Key is required"],
    [{ key: "", category: "env" }, "/data/attributes/key", "Key can't be blank"],
    [{ key: "k".repeat(129), category: "env" }, "/data/attributes/key", "Key is too long (maximum is 128 characters)"],
    [{ key: 5, category: "env" }, "/data/attributes/key", "Key must be a string"],
    [{ key: "k" }, "/data/attributes/category", "Category is required"],
    [{ key: "k", category: "policy-set" }, "/data/attributes/category", undefined],
    [{ key: "k", category: "env", hcl: "yes" }, "/data/attributes/hcl", "Hcl must be a boolean"],
    [{ key: "k", category: "env", sensitive: 1 }, "/data/attributes/sensitive", "Sensitive must be a boolean"],
    [{ key: "k", category: "env", value: 7 }, "/data/attributes/value", undefined],
    [{ key: "k", category: "env", value: "x".repeat(256 * 1024 + 1) }, "/data/attributes/value", undefined],
    [{ key: "k", category: "env", description: "d".repeat(513) }, "/data/attributes/description", undefined],
  ])("rejects invalid attributes %# with 422 and a source pointer, storing nothing", async (attributes, pointer, detail) => {
    const a = await app();
    const res = await create(a, attributes);
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source.pointer).toBe(pointer);
    expect(res.json.errors[0].title).toBe("invalid attribute");
    if (detail) expect(res.json.errors[0].detail).toBe(detail);
    expect((await a.call("GET", VARS)).json.data).toEqual([]);
  });

  it("accepts a value of exactly 256 KiB and stores a null value as an empty string", async () => {
    const a = await app();
    expect((await create(a, { key: "big", category: "env", value: "x".repeat(256 * 1024) })).status).toBe(201);
    expect((await create(a, { key: "nul", category: "env", value: null })).json.data.attributes.value).toBe("");
  });

  it.each([
    [{ data: { attributes: { key: "k", category: "env" } } }, "/data/type"],
    [{ data: { type: "variables", attributes: { key: "k", category: "env" } } }, "/data/type"],
    [{ data: "x" }, "/data"],
    [{}, "/data"],
    [[1, 2], "/data"],
    [{ data: { type: "vars", attributes: [] } }, "/data/attributes"],
  ])("rejects a malformed document %# with 422", async (body, pointer) => {
    const a = await app();
    const res = await a.call("POST", VARS, { body });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source.pointer).toBe(pointer);
  });

  it("answers 400 for malformed JSON, 415 for another media type and 413 past 1 MiB", async () => {
    const a = await app();
    const bad = await a.call("POST", VARS, { raw: '{"data": {' });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].title).toBe("bad request");
    const media = await a.call("POST", VARS, { raw: JSON.stringify(varsBody({ key: "k", category: "env" })), contentType: "text/plain" });
    expect(media.status).toBe(415);
    expect(media.json.errors[0].title).toBe("unsupported media type");
    const plain = await a.call("POST", VARS, { body: varsBody({ key: "k", category: "env" }), contentType: "application/json; charset=utf-8" });
    expect(plain.status).toBe(201);
    const huge = await a.call("POST", VARS, { raw: JSON.stringify(varsBody({ key: "h", category: "env", value: "x".repeat(1024 * 1024) })) });
    expect(huge.status).toBe(413);
    expect(huge.json.errors[0].title).toBe("payload too large");
    expect((await a.call("GET", VARS)).json.data).toHaveLength(1);
  });

  it("answers 400 for a lone surrogate escape and accepts a proper pair", async () => {
    const a = await app();
    const lone = await a.call("POST", VARS, { raw: '{"data":{"type":"vars","attributes":{"key":"k","value":"\\ud800x","category":"env"}}}' });
    expect(lone.status).toBe(400);
    expect((await a.call("GET", VARS)).json.data).toEqual([]);
    const pair = await a.call("POST", VARS, { raw: '{"data":{"type":"vars","attributes":{"key":"k","value":"\\ud83d\\ude00","category":"env"}}}' });
    expect(pair.status).toBe(201);
    expect(pair.json.data.attributes.value).toBe("😀");
  });

  describe("sensitive variables (D10)", () => {
    const secret = "s3cr3t-value-that-must-not-leak";
    const sensitive = async (a: TestApp) =>
      (await create(a, { key: "token", value: secret, category: "env", sensitive: true, description: "d" })).json.data;

    it("answers value null in create, list, show and update responses", async () => {
      const a = await app();
      const created = await sensitive(a);
      expect(created.attributes.value).toBeNull();
      expect(created.attributes.sensitive).toBe(true);
      const all = [
        await a.call("GET", VARS),
        await a.call("GET", `${VARS}/${created.id}`),
        await a.call("PATCH", `${VARS}/${created.id}`, { body: varsBody({ description: "e" }) }),
      ];
      for (const res of all) {
        expect(res.status).toBe(200);
        expect(res.text).not.toContain(secret);
        expect(res.text).toContain('"value":null');
      }
    });

    it.each([
      [{ key: "renamed" }, "key", "Key cannot be updated for a sensitive variable"],
      [{ category: "config" }, "category", "Category cannot be updated for a sensitive variable"],
      [{ hcl: true }, "hcl", "HCL cannot be updated for a sensitive variable"],
      [{ sensitive: false }, "sensitive", undefined],
    ])("refuses changing %j on a sensitive variable", async (attributes, attribute, detail) => {
      const a = await app();
      const created = await sensitive(a);
      const res = await a.call("PATCH", `${VARS}/${created.id}`, { body: varsBody(attributes) });
      expect(res.status).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe(`/data/attributes/${attribute}`);
      if (detail) expect(res.json.errors[0].detail).toBe(detail);
      else expect(res.json.errors[0].detail).toMatch(/^Sensitive cannot be changed from true to false/);
      expect((await a.call("GET", `${VARS}/${created.id}`)).json.data.attributes["version-id"]).toBe(created.attributes["version-id"]);
    });

    it("allows sending unchanged key, category and hcl, and changing value and description", async () => {
      const a = await app();
      const created = await sensitive(a);
      const res = await a.call("PATCH", `${VARS}/${created.id}`, {
        body: varsBody({ key: "token", category: "env", hcl: false, value: "next", description: "new" }),
      });
      expect(res.status).toBe(200);
      expect(res.json.data.attributes.description).toBe("new");
      expect(await a.runplane.variables.resolveForRun("ws-a")).toEqual([{ key: "token", value: "next", category: "env", hcl: false }]);
    });

    it("allows turning a plain variable sensitive, keeping its value for the run", async () => {
      const a = await app();
      const id = (await create(a, { key: "k", value: "plain", category: "config", hcl: true })).json.data.id;
      const res = await a.call("PATCH", `${VARS}/${id}`, { body: varsBody({ sensitive: true }) });
      expect(res.status).toBe(200);
      expect(res.json.data.attributes.value).toBeNull();
      expect(await a.runplane.variables.resolveForRun("ws-a")).toEqual([{ key: "k", value: "plain", category: "config", hcl: true }]);
    });

    it("resolves plaintext for the host's run through the programmatic API only", async () => {
      const a = await app();
      await sensitive(a);
      await create(a, { key: "plain", value: "p", category: "config" });
      expect(await a.runplane.variables.resolveForRun("ws-a")).toEqual([
        { key: "token", value: secret, category: "env", hcl: false },
        { key: "plain", value: "p", category: "config", hcl: false },
      ]);
    });
  });

  describe("deprecated create filters (D12)", () => {
    it("accepts filters naming the workspace of the path", async () => {
      const a = await app();
      const body = { ...varsBody({ key: "k", category: "env" }), filter: { workspace: { name: "alpha-ws" }, organization: { name: "acme" } } };
      expect((await a.call("POST", VARS, { body })).status).toBe(201);
    });
    it.each([
      [{ workspace: { name: "beta-ws" } }, "/filter/workspace/name"],
      [{ organization: { name: "other" } }, "/filter/organization/name"],
    ])("refuses filters naming another workspace or organization %j", async (filter, pointer) => {
      const a = await app();
      const res = await a.call("POST", VARS, { body: { ...varsBody({ key: "k", category: "env" }), filter } });
      expect(res.status).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe(pointer);
    });
  });

  describe("dialect (D1)", () => {
    it("writes config in the default dialect and accepts terraform on input", async () => {
      const a = await app();
      const res = await create(a, { key: "k", category: "terraform" });
      expect(res.json.data.attributes.category).toBe("config");
    });
    it("writes terraform in the hcp-terraform dialect and accepts config on input", async () => {
      const a = await app({ dialect: "hcp-terraform" });
      const res = await create(a, { key: "k", category: "config" });
      expect(res.json.data.attributes.category).toBe("terraform");
      expect((await a.call("GET", VARS)).json.data[0].attributes.category).toBe("terraform");
    });
    it("never mentions config in an hcp-terraform error, and lists the default words otherwise", async () => {
      const hcp = await app({ dialect: "hcp-terraform" });
      const created = await create(hcp, { key: "k", category: "bogus" });
      expect(created.status).toBe(422);
      expect(created.json.errors).toStrictEqual([
        { status: "422", title: "invalid attribute", detail: "Category must be one of: terraform, env", source: { pointer: "/data/attributes/category" } },
      ]);
      const id = (await create(hcp, { key: "ok", category: "env" })).json.data.id;
      const patched = await hcp.call("PATCH", `${VARS}/${id}`, { body: { data: { type: "vars", id, attributes: { category: "tf" } } } });
      expect(patched.status).toBe(422);
      for (const res of [created, patched]) expect(JSON.stringify(res.json)).not.toMatch(/config/i);
      const plain = await create(await app(), { key: "k", category: "bogus" });
      expect(plain.json.errors[0].detail).toBe("Category must be one of: config, env");
    });
  });

  describe("authentication and authorization (D4)", () => {
    it("answers 401 without a token or with an unknown one", async () => {
      const a = await app();
      for (const token of [null, "nope"]) {
        const res = await a.call("GET", VARS, { token });
        expect(res.status).toBe(401);
        expect(res.json).toEqual({ errors: [{ status: "401", title: "unauthorized" }] });
      }
      expect((await a.call("GET", VARS, { headers: { authorization: "Basic abc" }, token: null })).status).toBe(401);
    });
    it("answers 404 to a principal of another organization, on reads and writes", async () => {
      const a = await app();
      const id = (await create(a, { key: "k", category: "env" })).json.data.id;
      expect((await a.call("GET", VARS, { token: a.otherOrgToken })).status).toBe(404);
      expect((await a.call("DELETE", `${VARS}/${id}`, { token: a.otherOrgToken })).status).toBe(404);
      expect((await a.call("GET", `${VARS}/${id}`)).status).toBe(200);
    });
  });
});

describe("routing", () => {
  it("answers 204 to ping without credentials", async () => {
    const a = await createTestApp();
    expect((await a.call("GET", "/api/v2/ping", { token: null })).status).toBe(204);
  });
  it("answers JSON:API 404 for unknown paths and 405 with Allow for a wrong method", async () => {
    const a = await createTestApp();
    const unknown = await a.call("GET", "/api/v2/nothing-here");
    expect(unknown.status).toBe(404);
    expect(unknown.json.errors[0].title).toBe("not found");
    expect((await a.call("GET", "/elsewhere")).status).toBe(404);
    const wrong = await a.call("PUT", VARS);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET, POST");
  });
  it("answers HEAD like GET without a body", async () => {
    const a = await createTestApp();
    const head = await a.call("HEAD", VARS);
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(head.headers.get("content-type")).toBe("application/vnd.api+json");
    expect((await a.call("HEAD", "/api/v2/ping", { token: null })).status).toBe(204);
  });
  it("serves every route under a custom base path", async () => {
    const a = await createTestApp({ basePath: "/tfe/api/v2/" });
    expect((await a.call("GET", "/tfe/api/v2/ping")).status).toBe(204);
    const res = await a.call("POST", "/tfe/api/v2/workspaces/ws-a/vars", { body: varsBody({ key: "k", category: "env" }) });
    expect(res.json.data.links.self).toMatch(/^\/tfe\/api\/v2\/workspaces\/ws-a\/vars\/var-/);
    expect((await a.call("GET", VARS)).status).toBe(404);
  });
});
