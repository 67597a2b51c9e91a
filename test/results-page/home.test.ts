import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResultsPage, type Principal } from "../../src/index.js";
import { resultsPageFor, SCRIPT, seedRun, type SeededRun } from "./fixtures.js";

// The home lists the workspaces a credential may read and recent runs across them.

let seeded: SeededRun;
let page: (request: Request) => Promise<Response>;
/** Every run of acme, newest first: the seeded one in alpha-ws, then 12 in beta-ws and gamma-ws alternately. */
const acmeRuns: { id: string; path: string }[] = [];

beforeAll(async () => {
  seeded = await seedRun();
  page = resultsPageFor(seeded.app);
  const { runplane, clock } = seeded.app;
  const d = runplane.directory;
  // prj-b holds gamma-ws; team-devs may read prj-b only. The organization `other` has its own workspace.
  await d.projects.create({ id: "prj-b", name: "bravo", organization: "acme" });
  await d.workspaces.create({ id: "ws-c", name: "gamma-ws", organization: "acme", projectId: "prj-b" });
  await d.projects.create({ id: "prj-o", name: "oscar", organization: "other" });
  await d.workspaces.create({ id: "ws-o", name: "other-ws", organization: "other", projectId: "prj-o" });
  acmeRuns.push({ id: seeded.runId, path: `/app/acme/alpha-ws/runs/${seeded.runId}` });
  for (let i = 1; i <= 24; i++) {
    clock.advance(1000);
    const [workspaceId, name] = i % 2 === 0 ? ["ws-b", "beta-ws"] : ["ws-c", "gamma-ws"];
    const { run } = await runplane.runTasks.createRun({ workspaceId, configurationVersionId: "cv-1", message: `run ${i}` });
    acmeRuns.unshift({ id: run.id, path: `/app/acme/${name}/runs/${run.id}` });
  }
  await runplane.runTasks.createRun({ workspaceId: "ws-o", configurationVersionId: "cv-1", message: "other org" });
});
afterAll(() => seeded.dispose());

async function get(path: string, token: string | null = seeded.app.ownerToken): Promise<{ status: number; html: string }> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  const response = await page(new Request(`http://localhost${path}`, { headers }));
  return { status: response.status, html: await response.text() };
}

/** Workspace names linked from a workspaces table, in page order. */
const workspaces = (html: string): string[] => [...html.matchAll(/<tr>\n<td><a href="\/app\/[^/"]+\/([^"]+)">/g)].map((m) => decodeURIComponent(m[1]!));
/** Run page paths linked from the recent runs table, in page order. */
const recentRuns = (html: string): string[] => {
  const table = /<h2>Recent runs<\/h2>([\s\S]*?)<\/section>/.exec(html)?.[1] ?? "";
  return [...table.matchAll(/<a class="mono" href="([^"]+)">/g)].map((m) => m[1]!);
};

describe("results page: the home", () => {
  it("lists the organization and the workspaces an owner may read, with links, and none of another organization", async () => {
    const { status, html } = await get("/app/");
    expect(status).toBe(200);
    expect(html).toContain(`<h2><a href="/app/acme">acme</a></h2>`);
    expect(workspaces(html)).toEqual(["alpha-ws", "beta-ws", "gamma-ws"]);
    expect(html).toContain(`<td><a href="/app/acme/beta-ws">beta-ws</a></td>\n<td>12</td>`);
    expect(html).not.toContain("other-ws");
    expect(html).toContain('<form method="get" action="/app/runs"');
  });

  it("shows the 20 newest runs across the workspaces, newest first, each linked to its run page", async () => {
    const { html } = await get("/app/");
    const linked = recentRuns(html);
    expect(linked).toEqual(acmeRuns.slice(0, 20).map((r) => r.path));
    expect(html).toContain("The 20 newest runs of these workspaces, newest first");
    const opened = await get(linked[0]!);
    expect(opened.status).toBe(200);
    expect(opened.html).toContain(`<span class="mono">${acmeRuns[0]!.id}</span>`);
  });

  it("shows a team only the workspaces of projects it may read, and their runs only", async () => {
    const none = await get("/app/", seeded.app.devToken);
    expect(none.status).toBe(200);
    expect(workspaces(none.html)).toEqual([]);
    expect(recentRuns(none.html)).toEqual([]);
    expect(none.html).toContain("This credential may not read the runs of any workspace.");
    expect(none.html).not.toMatch(/alpha-ws|beta-ws|gamma-ws|\/app\/acme/);

    const grant = await seeded.app.runplane.teamProjects.create("prj-b", "team-devs", { access: "read" });
    try {
      const some = await get("/app/", seeded.app.devToken);
      expect(workspaces(some.html)).toEqual(["gamma-ws"]);
      expect(some.html).not.toMatch(/alpha-ws|beta-ws/);
      expect(recentRuns(some.html)).toEqual(acmeRuns.filter((r) => r.path.includes("/gamma-ws/")).map((r) => r.path));
    } finally {
      await seeded.app.runplane.teamProjects.delete(grant.id);
    }
  });

  it("asks for a credential first and comes back to the home after sign-in", async () => {
    const { status, html } = await get("/app/", null);
    expect(status).toBe(401);
    expect(html).toContain(`<input type="hidden" name="next" value="/app/">`);
    expect(html).not.toContain("alpha-ws");
  });
});

describe("results page: an organization", () => {
  it("lists its readable workspaces with links to their pages, and its recent runs", async () => {
    const { status, html } = await get("/app/acme");
    expect(status).toBe(200);
    expect(html).toContain("<h1>acme</h1>");
    expect(html).toContain(`<a href="/app/acme/alpha-ws">alpha-ws</a>`);
    expect(workspaces(html)).toEqual(["alpha-ws", "beta-ws", "gamma-ws"]);
    expect(recentRuns(html)).toEqual(acmeRuns.slice(0, 20).map((r) => r.path));
    const other = await get("/app/other", seeded.app.otherOrgToken);
    expect(workspaces(other.html)).toEqual(["other-ws"]);
    expect(recentRuns(other.html)).toHaveLength(1);
  });

  it("answers the same 404 for an unknown organization, another one and one without a readable workspace", async () => {
    const unknown = await get("/app/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.html).toContain("There is no such organization, or you are not allowed to see it.");
    for (const [path, token] of [["/app/other", seeded.app.ownerToken], ["/app/acme", seeded.app.otherOrgToken], ["/app/acme", seeded.app.devToken]] as const) {
      const res = await get(path, token);
      expect(res.status, path).toBe(404);
      expect(res.html, path).toBe(unknown.html);
    }
    expect((await get("/app/acme", null)).status).toBe(401);
    expect((await get("/app/%E0%A4%A")).status).toBe(404);
  });

  it("escapes organization and workspace names", async () => {
    const org = `x${SCRIPT}`;
    await seeded.app.runplane.directory.organizations.create({ name: org });
    await seeded.app.runplane.directory.projects.create({ id: "prj-x", name: "x", organization: org });
    await seeded.app.runplane.directory.workspaces.create({ id: "ws-x", name: `w/${SCRIPT}`, organization: org, projectId: "prj-x" });
    const owner: Principal = { organization: org, kind: "user", teamIds: [], isOwner: true, orgPermissions: [] };
    const hosted = createResultsPage(seeded.app.runplane, { prefix: "/app", authenticate: async () => owner });
    for (const path of ["/app/", `/app/${encodeURIComponent(org)}`]) {
      const res = await hosted(new Request(`http://localhost${path}`));
      const html = await res.text();
      expect(res.status, path).toBe(200);
      expect(html).not.toContain(SCRIPT);
      expect(html).toContain(`href="/app/${encodeURIComponent(org)}/${encodeURIComponent(`w/${SCRIPT}`)}">w/&lt;script&gt;`);
    }
  });
});
