import { describe, expect, it } from "vitest";
import { createTestApp } from "../helpers/app.js";
import { STORAGES, theEvent } from "./helpers.js";

const VARS = "/api/v2/workspaces/ws-a/vars";

// decision D53: nothing a client sends reaches the trail unbounded or unchecked.
describe.each(STORAGES)("audit: hostile input (%s)", (_name, makeStorage) => {
  it("replaces a request id or client address that is not plain, bounded data, and never keeps the user agent", async () => {
    const app = await createTestApp({ storage: makeStorage(), trustProxy: 1 });
    const headers = { "x-request-id": "<script>alert(1)</script>", "x-forwarded-for": "10.0.0.1, ' OR 1=1 --", "user-agent": "evil-agent/1.0 <img src=x>" };
    expect((await app.call("POST", VARS, { body: { data: { type: "vars", attributes: { key: "a", value: "v", category: "env" } } }, headers })).status).toBe(201);
    const event = await theEvent(app.storage, "var", "create");
    expect(event.request.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(event.request.clientAddress).toBeNull();
    expect(JSON.stringify(event)).not.toContain("evil-agent");
    const long = "x".repeat(129);
    await app.call("POST", VARS, { body: { data: { type: "vars", attributes: { key: "b", value: "v", category: "env" } } }, headers: { "x-request-id": long } });
    const second = (await app.storage.audit!.list("acme", { offset: 0, limit: 100 })).items.at(-1)!;
    expect(second.request.id).not.toBe(long);
  });

  it("cuts a client's long texts to 256 characters", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    const value = "d".repeat(5_000);
    expect((await app.call("POST", VARS, { body: { data: { type: "vars", attributes: { key: "c", value, category: "env" } } } })).status).toBe(201);
    const change = (await theEvent(app.storage, "var", "create")).changes.find((c) => c.field === "value")!;
    expect(change.new).toBe(`${"d".repeat(256)}…`);
  });

  // Found from outside: the cut at 256 UTF-16 units kept half of an emoji, which no JSON parser
  // that checks Unicode reads back (and runplane itself refuses in a request).
  it("never cuts a character in two: a value and a token description cut at an emoji keep it whole or drop it", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    const value = `${"D".repeat(255)}\u{1F600}tail`;
    expect((await app.call("POST", VARS, { body: { data: { type: "vars", attributes: { key: "e", value, description: value, category: "env" } } } })).status).toBe(201);
    const event = await theEvent(app.storage, "var", "create");
    for (const field of ["value", "description"]) {
      const change = event.changes.find((c) => c.field === field)!;
      expect(change.new).toBe(`${"D".repeat(255)}…`);
    }
    const { token } = await app.runplane.directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners", description: `${"D".repeat(127)}\u{1F600}tail` });
    expect((await app.call("POST", VARS, { token, body: { data: { type: "vars", attributes: { key: "f", value: "v", category: "env" } } } })).status).toBe(201);
    const byToken = (await app.storage.audit!.list("acme", { offset: 0, limit: 100 })).items.at(-1)!;
    expect(byToken.actor.description).toBe(`${"D".repeat(127)}…`);
    expect(JSON.stringify((await app.storage.audit!.list("acme", { offset: 0, limit: 100 })).items)).not.toMatch(lone);
  });

  // Found from outside: the trail records a request id the client never saw, so no client could
  // tie its answer to its event.
  it("answers every request with the request id the trail records for it, the client's own when plain", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    const created = await app.call("POST", VARS, { body: { data: { type: "vars", attributes: { key: "g", value: "v", category: "env" } } } });
    const event = await theEvent(app.storage, "var", "create");
    expect(created.headers.get("x-request-id")).toBe(event.request.id);
    const chosen = await app.call("GET", VARS, { headers: { "x-request-id": "deploy-42.step:7" } });
    expect(chosen.headers.get("x-request-id")).toBe("deploy-42.step:7");
    const replaced = await app.call("GET", `${VARS}/var-missing`, { headers: { "x-request-id": "<bad id>" } });
    expect(replaced.status).toBe(404);
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
