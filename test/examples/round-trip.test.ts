import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { killSpawnedServers, spawnServer, type SpawnedServer } from "../helpers/reference-server.js";

/**
 * The reference server's run task round trip, the way a user meets it after `npm start`: the
 * dispatcher sends the demo run's requests to the bundled example integration, which calls back
 * through the API; the printed curl lines work as printed.
 */
const ROOT = new URL("../../", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "runplane-round-trip-"));
const sh = promisify(execFile);

interface Started extends SpawnedServer {
  origin: string;
  token: string;
  curls: string[];
}

async function start(): Promise<Started> {
  // The embedded SQLite file, even where the environment names a database (CI does).
  const env = { ...process.env, DATABASE_URL: "", PORT: "0", INTEGRATION_PORT: "0", DATA_DIR: dataDir };
  const s = await spawnServer(["examples/server/main.ts"], env, /task-stages\n/);
  const out = s.output();
  const curls = out
    .split("\n")
    .filter((line) => line.startsWith("  curl "))
    .map((line) => line.trim());
  return { ...s, origin: s.api.replace(/\/api\/v2$/, ""), token: s.token!, curls };
}

const stop = (s: Started): Promise<number | null> => s.stop();

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function demoRun(s: Started, message?: string): Promise<{ run_id: string; stages: Record<string, string>; results_page: string }> {
  const res = await fetch(`${s.origin}/demo/runs`, {
    method: "POST",
    headers: { ...bearer(s.token), "content-type": "application/json" },
    ...(message === undefined ? {} : { body: JSON.stringify({ message }) }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as any;
}

async function getJson(s: Started, path: string): Promise<any> {
  const res = await fetch(`${s.api}${path}`, { headers: bearer(s.token) });
  expect(res.status, path).toBe(200);
  return res.json();
}

/** Stage statuses of a run, read through the API, with the included results. */
async function stagesOf(s: Started, runId: string) {
  const doc = await getJson(s, `/runs/${runId}/task-stages`);
  const stages = Object.fromEntries(doc.data.map((d: any) => [d.attributes.stage, d.attributes.status]));
  const ids: string[] = doc.data.flatMap((d: any) => d.relationships["task-results"].data.map((r: any) => r.id));
  const results = await Promise.all(ids.map(async (id) => (await getJson(s, `/task-results/${id}`)).data));
  return { stages, results };
}

afterAll(() => {
  killSpawnedServers();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("reference server run task round trip", () => {
  it("runs demo runs through the example integration, and the printed curl lines work", { timeout: 40_000 }, async () => {
    const s = await start();
    expect(s.curls).toHaveLength(3);
    expect(s.output()).toMatch(/results page: http:\/\/127\.0\.0\.1:\d+\/app\/runs\/<run id>/);
    expect(s.output()).toMatch(/http:\/\/127\.0\.0\.1:\d+\/app\/ \(your organizations, workspaces and recent runs\)/);
    const keyFile = statSync(join(dataDir, "integration-hmac-key"));
    expect(keyFile.mode & 0o777).toBe(0o600);

    // A passing run: both stages pass, through the dispatcher, the integration and its callbacks.
    const passing = await demoRun(s);
    expect(passing.stages).toEqual({ post_plan: "passed", pre_apply: "passed" });
    expect(passing.results_page).toBe(`${s.origin}/app/runs/${passing.run_id}`);
    const ok = await stagesOf(s, passing.run_id);
    expect(ok.stages).toEqual({ post_plan: "passed", pre_apply: "passed" });
    expect(ok.results.map((r: any) => [r.attributes.stage, r.attributes.status, r.attributes["task-id"]]).sort()).toEqual([
      ["post_plan", "passed", "task-demo"],
      ["pre_apply", "passed", "task-demo-advisory"],
    ]);

    // A failing run: the mandatory check fails at post_plan and pre_apply never starts.
    const failing = await demoRun(s, "please fail");
    expect(failing.stages).toEqual({ post_plan: "failed", pre_apply: "unreachable" });
    const bad = await stagesOf(s, failing.run_id);
    expect(bad.stages).toEqual({ post_plan: "failed", pre_apply: "unreachable" });
    const failed = bad.results.find((r: any) => r.attributes.stage === "post_plan");
    expect(failed.attributes.status).toBe("failed");
    const outcomes = await getJson(s, `/task-results/${failed.id}/outcomes`);
    expect(outcomes.data.map((o: any) => o.attributes["outcome-id"]).sort()).toEqual(["EXAMPLE-001", "EXAMPLE-002"]);
    const refused = outcomes.data.find((o: any) => o.attributes["outcome-id"] === "EXAMPLE-002");
    expect(refused.attributes.tags).toContainEqual({ label: "Severity", value: [{ label: "High", level: "error" }] });

    // A run whose demo plan deletes a resource: the integration downloads the plan (D24) and refuses it.
    const destroying = await demoRun(s, "destroy the legacy resource");
    expect(destroying.stages).toEqual({ post_plan: "failed", pre_apply: "unreachable" });
    const destroyed = (await stagesOf(s, destroying.run_id)).results.find((r: any) => r.attributes.stage === "post_plan");
    expect(destroyed.attributes.message).toBe("The plan deletes 1 resource");
    const deletions = await getJson(s, `/task-results/${destroyed.id}/outcomes`);
    expect(deletions.data.map((o: any) => o.attributes["outcome-id"]).sort()).toEqual(["DELETE-null_resource.legacy", "EXAMPLE-001"]);

    // An API credential with runs >= read downloads the demo configuration: a gzip tarball with main.tf.
    const archive = await fetch(`${s.api}/configuration-versions/cv-demo/download`, { headers: bearer(s.token) });
    expect(archive.headers.get("content-type")).toBe("application/octet-stream");
    const tar = gunzipSync(Buffer.from(await archive.arrayBuffer()));
    expect(tar.subarray(0, 7).toString()).toBe("main.tf");
    expect(tar.toString("latin1")).toContain('resource "null_resource" "legacy"');

    // The results page, signed in with the owners token as a bearer header.
    const page = await fetch(`${s.origin}/app/runs/${failing.run_id}`, { headers: bearer(s.token) });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("EXAMPLE-002");
    // Decision D25: the run_app_url the integration received (it links its outcome there) opens the
    // run, and the run page links to its workspace, which lists the run.
    const inspected = outcomes.data.find((o: any) => o.attributes["outcome-id"] === "EXAMPLE-001");
    const runAppUrl = new URL(inspected.attributes.url as string);
    expect(runAppUrl.pathname).toBe(`/app/demo/demo-workspace/runs/${failing.run_id}`);
    const viaLink = await fetch(`${s.origin}${runAppUrl.pathname}`, { headers: bearer(s.token) });
    expect(viaLink.status).toBe(200);
    const workspaceLink = /<a href="(\/app\/[^"]+)">/.exec(await viaLink.text())![1]!;
    expect(`${workspaceLink}/runs/${failing.run_id}`).toBe(runAppUrl.pathname);
    const workspacePage = await (await fetch(`${s.origin}${workspaceLink}`, { headers: bearer(s.token) })).text();
    expect(workspacePage).toContain(`/runs/${failing.run_id}">${failing.run_id}</a>`);
    expect(s.output()).toContain("/app/<organization>/<workspace>[/runs/<run id>]");

    // The printed curl lines, run by a shell as a user would paste them.
    const [createVar, startRun, listStages] = s.curls as [string, string, string];
    const created = JSON.parse((await sh("/bin/sh", ["-c", createVar])).stdout);
    expect(created.data.attributes.key).toBe("region");
    const started = JSON.parse((await sh("/bin/sh", ["-c", startRun])).stdout);
    expect(started.stages).toEqual({ post_plan: "passed", pre_apply: "passed" });
    expect(listStages).toContain("RUN_ID");
    const listed = JSON.parse((await sh("/bin/sh", ["-c", listStages.replace("RUN_ID", started.run_id)])).stdout);
    expect(listed.data.map((d: any) => d.attributes.status)).toEqual(["passed", "passed"]);

    // The demo route is for the owners token only.
    expect((await fetch(`${s.origin}/demo/runs`, { method: "POST" })).status).toBe(401);
    expect(await stop(s)).toBe(0);

    // A restart reuses the demo tasks, pointed at the integration's new port, and runs still work.
    const again = await start();
    const tasks = await getJson(again, "/organizations/demo/tasks");
    expect(tasks.data.map((t: any) => t.id).sort()).toEqual(["task-demo", "task-demo-advisory"]);
    const integrationUrl = /example integration: (\S+)/.exec(again.output())![1]!;
    expect(tasks.data.map((t: any) => t.attributes.url)).toEqual([integrationUrl, integrationUrl]);
    const attached = await getJson(again, "/workspaces/ws-demo/tasks");
    expect(attached.data).toHaveLength(2);
    expect((await demoRun(again, "please fail")).stages).toEqual({ post_plan: "failed", pre_apply: "unreachable" });
    expect((await demoRun(again)).stages).toEqual({ post_plan: "passed", pre_apply: "passed" });
    expect(await stop(again)).toBe(0);
  });
});
