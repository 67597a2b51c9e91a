import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runVerdict } from "../../src/results-page/verdict.js";
import { payloadOf } from "../helpers/run-tasks.js";
import { resultsPageFor, SCRIPT, seedRun, type SeededRun } from "./fixtures.js";

// Decision D25: the paths of `run_app_url` and `workspace_app_url` open pages.

let seeded: SeededRun;
let page: (request: Request) => Promise<Response>;
/** Runs of ws-b (`beta-ws`, no run tasks), oldest first, one second apart. */
const betaRuns: string[] = [];
let scannerResultId: string;

beforeAll(async () => {
  seeded = await seedRun();
  page = resultsPageFor(seeded.app);
  const { app } = seeded;
  const stages = await app.runplane.runTasks.listStages(seeded.runId);
  scannerResultId = (await app.runplane.runTasks.listResults(stages.items[0]!.id)).find((r) => r.taskName === "scanner")!.id;
  for (let i = 1; i <= 23; i++) {
    app.clock.advance(1000);
    const { run } = await app.runplane.runTasks.createRun({ workspaceId: "ws-b", configurationVersionId: "cv-1", message: `beta ${i}` });
    betaRuns.push(run.id);
  }
});
afterAll(() => seeded.dispose());

async function get(path: string, token: string | null = seeded.app.ownerToken): Promise<{ status: number; html: string }> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  const response = await page(new Request(`http://localhost${path}`, { headers }));
  return { status: response.status, html: await response.text() };
}

/** Run ids linked from a workspace page, in page order. */
const listed = (html: string): string[] => [...html.matchAll(/<a class="mono" href="[^"]*\/runs\/([^"]+)">/g)].map((m) => m[1]!);

describe("results page: the paths of the run task request's links", () => {
  it("opens the run at the path of run_app_url and the workspace at workspace_app_url", async () => {
    const payload = await payloadOf(seeded.app.storage, seeded.app.keyring, scannerResultId);
    const runPath = new URL(payload.run_app_url as string).pathname;
    const workspacePath = new URL(payload.workspace_app_url as string).pathname;
    expect(runPath).toBe(`/app/acme/alpha-ws/runs/${seeded.runId}`);
    expect(workspacePath).toBe("/app/acme/alpha-ws");

    const run = await get(runPath);
    expect(run.status).toBe(200);
    expect(run.html).toContain(`<span class="mono">${seeded.runId}</span>`);
    // The filter form stays on the path the reader came by; the header links to the workspace.
    expect(run.html).toContain(`<form method="get" action="${runPath}"`);
    expect(run.html).toContain(`<a href="/app/acme/alpha-ws">acme / alpha-ws</a>`);

    const workspace = await get(workspacePath);
    expect(workspace.status).toBe(200);
    expect(workspace.html).toContain("<h1>alpha-ws</h1>");
    expect(listed(workspace.html)).toEqual([seeded.runId]);
    expect(workspace.html).toContain(`href="/app/acme/alpha-ws/runs/${seeded.runId}"`);
  });

  it("keeps /app/runs/:run_id working", async () => {
    const { status, html } = await get(`/app/runs/${seeded.runId}`);
    expect(status).toBe(200);
    expect(html).toContain(`<form method="get" action="/app/runs/${seeded.runId}"`);
  });

  it("answers 404 for an unknown organization, workspace or run, and for a run under another workspace", async () => {
    for (const path of [
      `/app/nope/alpha-ws/runs/${seeded.runId}`,
      `/app/acme/nope/runs/${seeded.runId}`,
      `/app/acme/beta-ws/runs/${seeded.runId}`,
      "/app/acme/alpha-ws/runs/run-missing",
      "/app/acme/alpha-ws/runs/%E0%A4%A",
      "/app/nope/alpha-ws",
      "/app/acme/nope",
      "/app/acme/ws-a",
    ]) {
      const { status, html } = await get(path);
      expect(status, path).toBe(404);
      expect(html, path).toContain("<h1>Not found</h1>");
    }
  });

  it("asks for a credential first (401), and never lists a workspace the viewer may not read (404)", async () => {
    expect((await get("/app/acme/alpha-ws", null)).status).toBe(401);
    expect((await get(`/app/acme/alpha-ws/runs/${seeded.runId}`, null)).status).toBe(401);
    for (const token of [seeded.app.devToken, seeded.app.otherOrgToken]) {
      const ws = await get("/app/acme/alpha-ws", token);
      expect(ws.status).toBe(404);
      expect(ws.html).toContain("There is no such workspace, or you are not allowed to see it.");
      expect(ws.html).not.toContain(seeded.runId);
      expect((await get(`/app/acme/alpha-ws/runs/${seeded.runId}`, token)).status).toBe(404);
    }
    const grant = await seeded.app.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    try {
      expect(listed((await get("/app/acme/alpha-ws", seeded.app.devToken)).html)).toEqual([seeded.runId]);
    } finally {
      await seeded.app.runplane.teamProjects.delete(grant.id);
    }
  });
});

describe("results page: the workspace", () => {
  it("lists its runs newest first, 20 to a page, with links to older and newer pages", async () => {
    const newestFirst = [...betaRuns].reverse();
    const first = await get("/app/acme/beta-ws");
    expect(first.status).toBe(200);
    expect(listed(first.html)).toEqual(newestFirst.slice(0, 20));
    expect(first.html).toContain("Runs 1 to 20 of 23, newest first");
    expect(first.html).toContain(`<a href="/app/acme/beta-ws?page=2" rel="next">Older runs</a>`);
    expect(first.html).not.toContain("Newer runs");

    const second = await get("/app/acme/beta-ws?page=2");
    expect(listed(second.html)).toEqual(newestFirst.slice(20));
    expect(second.html).toContain("Runs 21 to 23 of 23, newest first");
    expect(second.html).toContain(`<a href="/app/acme/beta-ws" rel="prev">Newer runs</a>`);
    expect(second.html).not.toContain("Older runs");

    const beyond = await get("/app/acme/beta-ws?page=9");
    expect(beyond.status).toBe(200);
    expect(listed(beyond.html)).toEqual([]);
    expect(beyond.html).toContain("No runs on page 9; there are 2 pages.");
  });

  it("refuses a page number that is not an integer from 1 to 1,000,000 (400)", async () => {
    for (const bad of ["0", "-1", "x", "1.5", "1000001", "99999999"]) {
      expect((await get(`/app/acme/beta-ws?page=${bad}`)).status, bad).toBe(400);
    }
  });

  it("shows each run's stage statuses and verdict, escaped", async () => {
    const { html } = await get("/app/acme/alpha-ws");
    expect(html).toContain(`<span class="stage-status">Post-plan <span class="badge status-failed">failed</span></span>`);
    expect(html).toContain(`title="Did not pass: the post-plan stage failed."`);
    expect(html).toContain("Deploy &lt;b&gt;v2&lt;/b&gt;");
    const beta = await get("/app/acme/beta-ws");
    expect(beta.html).toContain(`<span class="muted">no run task stages</span>`);
  });

  it("escapes a workspace name, and finds it by its encoded path segment", async () => {
    await seeded.app.runplane.directory.workspaces.create({ id: "ws-evil", name: `x/${SCRIPT}`, organization: "acme", projectId: "prj-a" });
    const { status, html } = await get(`/app/acme/${encodeURIComponent(`x/${SCRIPT}`)}`);
    expect(status).toBe(200);
    expect(html).not.toContain(SCRIPT);
    expect(html).toContain("<h1>x/&lt;script&gt;");
  });
});

describe("results page: the run's verdict and timestamps", () => {
  it("states one verdict line for the whole run", async () => {
    const { html } = await get(`/app/acme/alpha-ws/runs/${seeded.runId}`);
    expect(html.match(/<p class="verdict[^"]*"/g)).toEqual([`<p class="verdict status-failed"`]);
    expect(html).toContain(`role="status">Did not pass: the post-plan stage failed.</p>`);
  });

  it("shows each timestamp once: same-second events share a line, created is the run's alone", async () => {
    const { html } = await get(`/app/runs/${seeded.runId}`);
    const lists = [...html.matchAll(/<ul class="times">([\s\S]*?)<\/ul>/g)].map((m) => m[1]!);
    expect(lists).toHaveLength(3); // the stage and its two results
    for (const list of lists) {
      const shown = [...list.matchAll(/<time [^>]*>([^<]+)<\/time>/g)].map((m) => m[1]!);
      expect(new Set(shown).size).toBe(shown.length);
      expect(list).not.toContain("created");
    }
    expect(lists[0]).toMatch(/^\n<li>running, failed <time /);
    expect(html.match(/created <time/g)).toHaveLength(1); // the run's, in the header
  });

  it("words every state of a run", () => {
    const s = (stage: "pre_plan" | "post_plan", status: any, overridden = false) => ({ stage, status, overridden });
    expect(runVerdict([]).text).toBe("No run task stages: nothing was checked.");
    expect(runVerdict([s("pre_plan", "passed"), s("post_plan", "passed")])).toEqual({ tone: "passed", text: "Passed: all 2 stages passed." });
    expect(runVerdict([s("post_plan", "passed", true)]).text).toBe("Passed: its one stage passed (1 override).");
    expect(runVerdict([s("pre_plan", "passed"), s("post_plan", "errored")])).toEqual({ tone: "failed", text: "Did not pass: the post-plan stage errored." });
    expect(runVerdict([s("post_plan", "awaiting_override")]).tone).toBe("awaiting_override");
    expect(runVerdict([s("pre_plan", "running"), s("post_plan", "pending")]).text).toBe("Running: the pre-plan stage is waiting for its run tasks.");
    expect(runVerdict([s("pre_plan", "passed"), s("post_plan", "pending")]).text).toBe(
      "In progress: 1 of 2 stages passed; the post-plan stage has not started.",
    );
  });
});
