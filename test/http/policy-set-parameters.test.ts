import { afterEach, describe, expect, it } from "vitest";
import { createTestApp, varsBody, type TestApp } from "../helpers/app.js";
import { STORAGES } from "../helpers/storages.js";

const PARAMS = "/api/v2/policy-sets/polset-a/parameters";

describe.each(STORAGES)("policy set parameters over HTTP ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = async (): Promise<TestApp> => {
    const s = setup.create();
    dispose = s.dispose;
    return createTestApp({ storage: s.storage });
  };
  const create = (a: TestApp, attributes: Record<string, unknown>) => a.call("POST", PARAMS, { body: varsBody(attributes) });
  const seed = async (a: TestApp, n: number) => {
    for (let i = 0; i < n; i++) expect((await create(a, { key: `k${String(i).padStart(2, "0")}`, value: String(i), category: "policy-set" })).status).toBe(201);
  };

  it("creates a parameter as a vars resource configurable by the policy set", async () => {
    const a = await app();
    const res = await create(a, { key: "allowed_regions", value: "eu-west-1", category: "policy-set" });
    expect(res.status).toBe(201);
    const data = res.json.data;
    expect(data.type).toBe("vars");
    expect(data.id).toMatch(/^var-/);
    expect(data.attributes).toEqual({ key: "allowed_regions", value: "eu-west-1", sensitive: false, category: "policy-set" });
    expect(data.relationships.configurable).toEqual({
      links: { related: "/api/v2/policy-sets/polset-a" },
      data: { type: "policy-sets", id: "polset-a" },
    });
    expect(data.links.self).toBe(`${PARAMS}/${data.id}`);
  });

  it("defaults value to the empty string and sensitive to false", async () => {
    const a = await app();
    expect((await create(a, { key: "k", category: "policy-set" })).json.data.attributes).toMatchObject({ value: "", sensitive: false });
  });

  it.each([
    [{ key: "k", category: "env" }, "/data/attributes/category"],
    [{ key: "k", category: "config" }, "/data/attributes/category"],
    [{ key: "k" }, "/data/attributes/category"],
    [{ category: "policy-set" }, "/data/attributes/key"],
    [{ key: "k", category: "policy-set", sensitive: "true" }, "/data/attributes/sensitive"],
  ])("rejects %j with 422", async (attributes, pointer) => {
    const a = await app();
    const res = await create(a, attributes);
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source.pointer).toBe(pointer);
  });

  it("keeps keys unique per policy set", async () => {
    const a = await app();
    await create(a, { key: "k", category: "policy-set" });
    const dup = await create(a, { key: "k", category: "policy-set" });
    expect(dup.status).toBe(422);
    expect(dup.json.errors[0].detail).toBe("Key has already been taken");
  });

  it("lists every parameter without pagination when no page parameter is given", async () => {
    const a = await app();
    await seed(a, 25);
    const res = await a.call("GET", PARAMS);
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(25);
    expect(res.json.meta).toBeUndefined();
  });

  it("paginates when a page parameter is given, with absolute links and encoded brackets (D7)", async () => {
    const a = await app();
    await seed(a, 25);
    const res = await a.call("GET", `${PARAMS}?page%5Bnumber%5D=2`);
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: any) => d.attributes.key)).toEqual(["k20", "k21", "k22", "k23", "k24"]);
    expect(res.json.meta.pagination).toEqual({
      "current-page": 2,
      "page-size": 20,
      "prev-page": 1,
      "next-page": null,
      "total-pages": 2,
      "total-count": 25,
    });
    expect(res.json.links.first).toBe(`http://localhost:8080${PARAMS}?page%5Bnumber%5D=1&page%5Bsize%5D=20`);
    expect(res.json.links.next).toBeNull();
    expect(res.json.links.last).toBe(`http://localhost:8080${PARAMS}?page%5Bnumber%5D=2&page%5Bsize%5D=20`);
    const small = await a.call("GET", `${PARAMS}?page[size]=10`);
    expect(small.json.data).toHaveLength(10);
    expect(small.json.meta.pagination).toMatchObject({ "current-page": 1, "next-page": 2, "prev-page": null, "total-pages": 3 });
  });

  it("answers 200 with an empty page past the end", async () => {
    const a = await app();
    await seed(a, 3);
    const res = await a.call("GET", `${PARAMS}?page[number]=99`);
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual([]);
    expect(res.json.meta.pagination).toMatchObject({ "current-page": 99, "total-count": 3, "next-page": null });
  });

  it.each(["page[size]=101", "page[size]=0", "page[size]=abc", "page[number]=0", "page[number]=1.5"])(
    "answers 422 for %s",
    async (query) => {
      const a = await app();
      const res = await a.call("GET", `${PARAMS}?${query}`);
      expect(res.status).toBe(422);
      expect(res.json.errors[0].title).toBe("invalid attribute");
      expect(res.json.errors[0].source.parameter).toMatch(/^page\[/);
    },
  );

  it("shows, updates (omitted attributes unchanged) and deletes a parameter", async () => {
    const a = await app();
    const id = (await create(a, { key: "k", value: "v", category: "policy-set" })).json.data.id;
    expect((await a.call("GET", `${PARAMS}/${id}`)).json.data.attributes.value).toBe("v");
    const patched = await a.call("PATCH", `${PARAMS}/${id}`, { body: varsBody({ value: "w" }) });
    expect(patched.status).toBe(200);
    expect(patched.json.data.attributes).toEqual({ key: "k", value: "w", sensitive: false, category: "policy-set" });
    expect((await a.call("PATCH", `${PARAMS}/${id}`, { body: varsBody({ category: "env" }) })).status).toBe(422);
    expect((await a.call("DELETE", `${PARAMS}/${id}`)).status).toBe(204);
    expect((await a.call("GET", `${PARAMS}/${id}`)).status).toBe(404);
  });

  it("answers 404 for an unknown policy set, unknown parameter, or a workspace variable id", async () => {
    const a = await app();
    expect((await a.call("GET", "/api/v2/policy-sets/polset-nope/parameters")).status).toBe(404);
    expect((await a.call("GET", `${PARAMS}/var-nope`)).status).toBe(404);
    const wsVar = (await a.call("POST", "/api/v2/workspaces/ws-a/vars", { body: varsBody({ key: "k", category: "env" }) })).json.data.id;
    expect((await a.call("GET", `${PARAMS}/${wsVar}`)).status).toBe(404);
    expect((await a.call("DELETE", `${PARAMS}/${wsVar}`)).status).toBe(404);
    expect((await a.call("GET", `/api/v2/workspaces/ws-a/vars/${wsVar}`)).status).toBe(200);
  });

  it("masks sensitive parameters and resolves them in plaintext for evaluation", async () => {
    const a = await app();
    const res = await create(a, { key: "api_key", value: "hunter2-canary", category: "policy-set", sensitive: true });
    expect(res.json.data.attributes.value).toBeNull();
    expect((await a.call("GET", PARAMS)).text).not.toContain("hunter2-canary");
    const id = res.json.data.id;
    expect((await a.call("PATCH", `${PARAMS}/${id}`, { body: varsBody({ key: "renamed" }) })).status).toBe(422);
    expect((await a.call("PATCH", `${PARAMS}/${id}`, { body: varsBody({ sensitive: false }) })).status).toBe(422);
    expect(await a.runplane.policySetParameters.resolveForEvaluation("polset-a")).toEqual([{ key: "api_key", value: "hunter2-canary" }]);
  });

  it("answers 404 to another organization's principal", async () => {
    const a = await app();
    expect((await a.call("GET", PARAMS, { token: a.otherOrgToken })).status).toBe(404);
    expect((await create(a, { key: "k", category: "policy-set" })).status).toBe(201);
    expect((await a.call("POST", PARAMS, { token: a.otherOrgToken, body: varsBody({ key: "x", category: "policy-set" }) })).status).toBe(404);
  });
});
