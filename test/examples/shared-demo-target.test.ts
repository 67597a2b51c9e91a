import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { generateKey } from "../../src/index.js";
import { BASE_ENV } from "../cli/helpers.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { killSpawnedServers, spawnServer, type SpawnedServer } from "../helpers/reference-server.js";

// Decision D27: two reference servers started with plain `serve` on one database, each with its own
// bundled integration on its own port. Each used to point the demo tasks at its own integration and
// allow only that port, so a delivery went through or was refused depending on which host claimed it.
// Now the first host's integration stays the target and every host allows it.

const reachable = await postgresReachable("shared demo target");

describe.skipIf(!reachable)("reference hosts on one database share the demo tasks' integration", () => {
  const schema = uniqueSchema("demotarget");
  const dirs = ["a", "b", "c"].map((host) => mkdtempSync(join(tmpdir(), `runplane-${host}-`)));
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  const token = "shared-demo-target-admin-token-0123";
  const keyring = JSON.stringify({ keys: [{ id: "k1", key: generateKey() }] });
  const env = { ...BASE_ENV, DATABASE_URL, DATABASE_SCHEMA: schema, ADMIN_TOKEN: token, RUNPLANE_KEYRING: keyring, DATABASE_POOL_SIZE: "4", LOG_LEVEL: "info" };
  const start = (dir: string): Promise<SpawnedServer> =>
    spawnServer(["src/cli/main.ts", "serve", "--port", "0", "--integration-port", "0", "--data-dir", dir], env);

  afterAll(async () => {
    killSpawnedServers();
    await dropSchema(admin, schema);
    await admin.end();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("points the demo tasks at the first host's integration, which every host allows, and never refuses a delivery", async () => {
    const a = await start(dirs[0]!);
    const b = await start(dirs[1]!);
    const aUrl = /example integration: (http:\S+)/.exec(a.output())![1]!;
    expect(b.output()).toContain(`example integration: the demo tasks use ${aUrl}, the bundled integration of the host that saved them first`);
    expect(b.output()).toContain(`egress: run tasks may reach public addresses, the example integration (${new URL(aUrl).host})`);
    // The first host was alone: it must not claim several hosts, only say what PUBLIC_URL is for.
    expect(a.output()).not.toContain("several hosts");
    expect(a.output()).toContain("PUBLIC_URL is not set: callbacks name this host; set it to your load balancer before another host shares this database");
    expect(b.output()).toContain("several hosts on this database (2 live by their heartbeats): set PUBLIC_URL to your load balancer");
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    for (const api of [a.api, b.api]) {
      const task = (await (await fetch(`${api}/tasks/task-demo`, { headers })).json()) as { data: { attributes: { url: string } } };
      expect(task.data.attributes.url).toBe(aUrl);
    }
    // Runs started on either host, delivered by whichever dispatcher claims them.
    for (let i = 0; i < 4; i++) {
      const origin = (i % 2 ? b.api : a.api).replace(/\/api\/v2$/, "");
      const res = await fetch(`${origin}/demo/runs`, { method: "POST", headers, body: JSON.stringify({ message: `run ${i}` }) });
      expect(((await res.json()) as { stages: unknown }).stages).toStrictEqual({ post_plan: "passed", pre_apply: "passed" });
    }
    for (const host of [a, b]) expect(host.output().split("\n").filter((line) => /refused/.test(line) && !/^egress:/.test(line))).toStrictEqual([]);
    expect(await b.stop()).toBe(0);
    expect(await a.stop()).toBe(0);
  }, 90_000);

  it("points them at a starting host's own integration once nothing listens where they point (that host is gone)", async () => {
    const c = await start(dirs[2]!);
    const own = /example integration: (http:\S+) \(run tasks/.exec(c.output())?.[1];
    expect(own, c.output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/run-task$/);
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const task = (await (await fetch(`${c.api}/tasks/task-demo`, { headers })).json()) as { data: { attributes: { url: string } } };
    expect(task.data.attributes.url).toBe(own);
    const res = await fetch(`${c.api.replace(/\/api\/v2$/, "")}/demo/runs`, { method: "POST", headers, body: JSON.stringify({ message: "after the first host left" }) });
    expect(((await res.json()) as { stages: unknown }).stages).toStrictEqual({ post_plan: "passed", pre_apply: "passed" });
    expect(await c.stop()).toBe(0);
  }, 90_000);
});
