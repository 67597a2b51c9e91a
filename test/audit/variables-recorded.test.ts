import { describe, expect, it } from "vitest";
import { createTestApp } from "../helpers/app.js";
import { eventsOf, expectNoSecret, FROM_PROXY, STORAGES, theEvent, tokenIdOf } from "./helpers.js";

const SECRET = "AKIA-super-secret-value-1";
const SECRET2 = "AKIA-super-secret-value-2";
const VARS = "/api/v2/workspaces/ws-a/vars";
const PARAMS = "/api/v2/policy-sets/polset-a/parameters";
const body = (attributes: object, type = "vars") => ({ data: { type, attributes } });

// decision D53: every variable and parameter write is recorded in its own transaction, secrets never.
describe.each(STORAGES)("audit: variables and policy set parameters (%s)", (_name, makeStorage) => {
  it("records a sensitive variable's create, update and delete with the actor, request and client, never the value", async () => {
    // Behind one proxy (decision D62): the client is the address it appended, the right-most entry.
    const app = await createTestApp({ storage: makeStorage(), trustProxy: 1 });
    const created = await app.call("POST", VARS, { body: body({ key: "AWS_KEY", value: SECRET, category: "env", sensitive: true }), headers: FROM_PROXY });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    expect((await app.call("PATCH", `${VARS}/${id}`, { body: { data: { type: "vars", id, attributes: { value: SECRET2 } } } })).status).toBe(200);
    expect((await app.call("DELETE", `${VARS}/${id}`)).status).toBe(204);

    const create = await theEvent(app.storage, "var", "create");
    expect(create.resource.id).toBe(id);
    expect(create.actor).toMatchObject({ kind: "token", tokenId: await tokenIdOf(app, app.ownerToken), tokenKind: "user", userId: "user-owner" });
    expect(create.request).toStrictEqual({ id: "req-audit-1", clientAddress: "203.0.113.9" });
    expect(create.changes).toContainEqual({ field: "key", new: "AWS_KEY" });
    expect(create.changes).toContainEqual({ field: "value", note: "value changed" });
    const update = await theEvent(app.storage, "var", "update");
    expect(update.changes).toStrictEqual([{ field: "value", note: "value changed" }]);
    expect(update.request.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await theEvent(app.storage, "var", "destroy")).changes).toContainEqual({ field: "key", old: "AWS_KEY" });
    await expectNoSecret(app.storage, [SECRET, SECRET2, app.ownerToken]);
  });

  it("shows a plain variable's old and new values", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    const id = (await app.call("POST", VARS, { body: body({ key: "region", value: "eu-west-1", category: "terraform" }) })).json.data.id;
    await app.call("PATCH", `${VARS}/${id}`, { body: { data: { type: "vars", id, attributes: { value: "us-east-2" } } } });
    expect((await theEvent(app.storage, "var", "update")).changes).toStrictEqual([{ field: "value", old: "eu-west-1", new: "us-east-2" }]);
  });

  it("records nothing for a refused or failed write", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    await app.call("POST", VARS, { body: body({ key: "dup", value: "x", category: "env" }) });
    const before = (await eventsOf(app.storage)).length;
    expect((await app.call("POST", VARS, { body: body({ key: "dup", value: "y", category: "env" }) })).status).toBe(422);
    expect((await app.call("POST", VARS, { body: body({ key: "x", value: "y", category: "env" }), token: app.devToken })).status).toBe(404);
    expect((await app.call("DELETE", `${VARS}/var-doesnotexist00000`)).status).toBe(404);
    expect((await eventsOf(app.storage)).length).toBe(before);
  });

  it("records a sensitive policy set parameter's create, update and delete, never the value", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    const created = await app.call("POST", PARAMS, { body: body({ key: "api_key", value: SECRET, category: "policy-set", sensitive: true }) });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    expect((await app.call("PATCH", `${PARAMS}/${id}`, { body: { data: { type: "vars", id, attributes: { value: SECRET2 } } } })).status).toBe(200);
    expect((await app.call("DELETE", `${PARAMS}/${id}`)).status).toBe(204);
    for (const action of ["create", "update", "destroy"]) expect((await theEvent(app.storage, "policy-set-parameter", action)).resource.id).toBe(id);
    await expectNoSecret(app.storage, [SECRET, SECRET2]);
  });

  it("records the host's own writes as the system", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    await app.runplane.variables.create("ws-a", { key: "k", value: SECRET, category: "env", sensitive: true } as never);
    const event = await theEvent(app.storage, "var", "create");
    expect(event.actor).toMatchObject({ kind: "system", tokenId: null });
    expect(event.organization).toBe("acme");
    await expectNoSecret(app.storage, [SECRET]);
  });
});

describe("audit: a storage without an audit store", () => {
  it("records nothing and writes as before (a custom adapter, the bench's baseline)", async () => {
    const inner = STORAGES[1]![1]();
    const storage = { ...inner, audit: undefined };
    const app = await createTestApp({ storage });
    expect((await app.call("POST", VARS, { body: body({ key: "k", value: SECRET, category: "env", sensitive: true }) })).status).toBe(201);
    expect(await inner.audit!.organizations()).toStrictEqual([]);
    expect((await app.call("GET", "/api/v2/organization/audit-trail")).status).toBe(404);
  });
});
