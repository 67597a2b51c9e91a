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
  await seeded.app.call("POST", vars, { body: { data: { type: "vars", attributes: { key: "spoof", value: "safe\u202Eexe.txt\u200B\u2028\u061C", category: "env" } } } });
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
    expect(body).toContain("safe⟨U+202E⟩exe.txt⟨U+200B⟩⟨U+2028⟩⟨U+061C⟩");
    expect(body).not.toMatch(/[\u202E\u200B\u2028]/);
  });

  it("names a host-named actor as the host's, with the user behind it", async () => {
    await seeded.app.runplane.audit.as({ description: "alice (admin console)", userId: "user-alice" }, () => seeded.app.runplane.directory.teams.update("team-devs", { owners: true }));
    const body = await (await view(seeded.app.ownerToken, "?resource=team&action=update")).text();
    expect(body).toContain("alice (admin console) (named by the host)<br><span class=\"muted\">user-alice</span>");
    // Found from outside: control characters went out as they were (a NUL as a raw byte).
    await seeded.app.runplane.audit.as({ description: "mallory\u0000\nroot\u0085", userId: "user-m" }, () => seeded.app.runplane.directory.teams.update("team-devs", { owners: true }));
    const shown = await (await view(seeded.app.ownerToken, "?actor=user-m")).text();
    expect(shown).toContain("mallory⟨U+0000⟩⟨U+000A⟩root⟨U+0085⟩ (named by the host)");
    expect(shown).not.toMatch(/[\u0000\u0085]/);
    await seeded.app.runplane.directory.teams.update("team-devs", { owners: false });
  });

  // Found from outside: nothing linked to the audit view; its address had to be typed.
  it("is linked from the organization's page for its owners only", async () => {
    const orgPage = (token: string) => page(new Request("http://localhost/app/acme", { headers: { authorization: `Bearer ${token}` } })).then((r) => r.text());
    expect(await orgPage(seeded.app.ownerToken)).toContain('<a href="/app/acme/-/audit">Audit trail</a>');
    expect(await orgPage(seeded.app.devToken)).not.toContain("/-/audit");
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

  // Found from outside: the view showed the newest 100 events and no way to the older ones.
  it("pages back through older events with its filters kept, and back to the newest", async () => {
    for (let i = 0; i < 105; i++) await seeded.app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: `paged_${i}`, value: "v", category: "env" } } } });
    const first = await (await view(seeded.app.ownerToken, "?resource=var&action=create")).text();
    expect(first).toMatch(/100 newest matching events/);
    expect(first).toContain("paged_104");
    expect(first).not.toContain("paged_4<"); // the fifth-oldest of the batch is on the next page
    const older = /href="([^"]+)" rel="next">Older events/.exec(first)?.[1]?.replace(/&amp;/g, "&");
    expect(older).toMatch(/^\?resource=var&action=create&before=\d+$/);
    const second = await (await view(seeded.app.ownerToken, older!)).text();
    const shown = [...second.matchAll(/paged_(\d+)/g)].map((m) => Number(m[1]));
    expect(shown.slice(0, 5)).toStrictEqual([4, 3, 2, 1, 0]);
    expect(second).toMatch(/newest matching events? older than event \d+/);
    expect(second).toContain("region"); // the older events before the batch, still filtered
    expect(second).not.toContain('rel="next"'); // nothing older is left
    expect(second).toContain('href="?resource=var&amp;action=create">Newest events');
    // A malformed bound is no bound.
    expect(await (await view(seeded.app.ownerToken, "?resource=var&action=create&before=-1e9")).text()).toMatch(/100 newest matching events<\/caption>/);
  });

  it("is 404 to anyone but the organization's owners, and asks a visitor to sign in", async () => {
    expect((await view(seeded.app.devToken)).status).toBe(404);
    expect((await view(seeded.app.otherOrgToken)).status).toBe(404);
    expect((await view(seeded.app.otherOrgToken, "", "other")).status).toBe(200);
    const anonymous = await page(new Request("http://localhost/app/acme/-/audit"));
    expect(anonymous.status).toBe(401);
  });
});
