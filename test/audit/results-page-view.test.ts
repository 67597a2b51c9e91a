import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultsPageFor, seedRun, type SeededRun } from "../results-page/fixtures.js";

let seeded: SeededRun;
let page: (request: Request) => Promise<Response>;
beforeAll(async () => {
  seeded = await seedRun();
  page = resultsPageFor(seeded.app);
  const vars = "/api/v2/workspaces/ws-a/vars";
  await seeded.app.call("POST", vars, { body: { data: { type: "vars", attributes: { key: "<script>alert(1)</script>", value: "hidden-secret-1", category: "env", sensitive: true } } } });
  await seeded.app.call("POST", vars, { body: { data: { type: "vars", attributes: { key: "region", value: "eu", category: "env" } } } });
  await seeded.app.call("POST", vars, { body: { data: { type: "vars", attributes: { key: "spoof", value: "safe\u202Eexe.txt\u200B", category: "env" } } } });
});
afterAll(() => seeded.dispose());

const view = (token: string, query = "", organization = "acme") =>
  page(new Request(`http://localhost/app/${organization}/-/audit${query}`, { headers: { authorization: `Bearer ${token}` } }));

// decision D53: the results page's audit view, owners only, with filters by actor, resource and action.
describe("results page: the audit view", () => {
  it("shows an owner the organization's events, newest first, escaped, with no secret", async () => {
    const res = await view(seeded.app.ownerToken);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain("acme: audit trail");
    expect(body.indexOf("region")).toBeLessThan(body.indexOf("&lt;script&gt;"));
    expect(body).not.toContain("<script>alert(1)</script>");
    expect(body).not.toContain("hidden-secret-1");
    expect(body).toContain("value: value changed");
  });

  // Found from outside: a bidi override in a recorded value reversed the text after it in the view.
  it("writes out bidi and invisible format characters instead of letting them act", async () => {
    const body = await (await view(seeded.app.ownerToken, "?resource=var")).text();
    expect(body).toContain("safe⟨U+202E⟩exe.txt⟨U+200B⟩");
    expect(body).not.toMatch(/[\u202E\u200B]/);
  });

  it("filters by resource, action and actor", async () => {
    const tasks = await (await view(seeded.app.ownerToken, "?resource=workspace-task&action=create")).text();
    expect(tasks).toMatch(/2 newest matching events/);
    expect(tasks).not.toContain("region");
    const none = await (await view(seeded.app.ownerToken, "?actor=nobody-like-this")).text();
    expect(none).toContain("No events match");
    const byOwner = await (await view(seeded.app.ownerToken, "?actor=user-owner&resource=var")).text();
    expect(byOwner).toMatch(/3 newest matching events/);
  });

  it("is 404 to anyone but the organization's owners, and asks a visitor to sign in", async () => {
    expect((await view(seeded.app.devToken)).status).toBe(404);
    expect((await view(seeded.app.otherOrgToken)).status).toBe(404);
    expect((await view(seeded.app.otherOrgToken, "", "other")).status).toBe(200);
    const anonymous = await page(new Request("http://localhost/app/acme/-/audit"));
    expect(anonymous.status).toBe(401);
  });
});
