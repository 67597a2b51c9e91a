import { describe, expect, it } from "vitest";
import { postgresReachable } from "../helpers/postgres.js";
import { useCluster, type HostProcess } from "./cluster.js";

// Decision D27 for the API's records in real processes on one schema: a read cached on one host
// is fresh after another host writes (revision counters), eight hosts writing at once neither
// deadlock nor lose a write, and attaching a task while another host deletes it leaves no orphan.

const reachable = await postgresReachable("multihost consistency");
const WRITERS = 8;
const ROUNDS = 10;
const RACED_TASKS = 60;

describe.skipIf(!reachable)("several hosts on one database: records", () => {
  const cluster = useCluster("records");

  /** Starts `workers` together once each is ready; each must finish without an error. */
  async function runTogether(workers: HostProcess[]): Promise<string[]> {
    await Promise.all(workers.map((w) => w.line(/^ready$/)));
    for (const w of workers) w.send("go");
    const exits = await Promise.all(workers.map((w) => w.exit));
    for (const exit of exits) expect(exit.code, `${exit.stdout}\n${exit.stderr}`).toBe(0);
    return exits.map((e) => /^done (.*)$/m.exec(e.stdout)![1]!);
  }
  const count = async (sql: string): Promise<number> => (await cluster.shared.admin.query(sql.replaceAll("@.", `"${cluster.shared.schema}".`))).rows[0].n as number;

  it("a variable list cached on host A is fresh right after host B changes a variable or revokes the grant", async () => {
    const parent = await cluster.open();
    const d = parent.runplane.directory;
    await d.users.create({ id: "user-dev", username: "dev" });
    await d.teams.create({ id: "team-devs", name: "devs", organization: "acme", members: ["user-dev"] });
    const grant = await parent.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    const variable = await parent.runplane.variables.create("ws-a", { key: "region", value: "eu", category: "env" });
    const dev = (await d.createApiToken({ organization: "acme", kind: "user", userId: "user-dev" })).token;
    const org = (await d.createApiToken({ organization: "acme", kind: "organization" })).token;

    const [a, b] = [cluster.spawn("host", "cache-a", { RUNPLANE_HTTP: "1" }), cluster.spawn("host", "cache-b", { RUNPLANE_HTTP: "1" })];
    const [portA, portB] = await Promise.all([a, b].map(async (h) => (await h.line(/^ready (\d+)$/))[1]));
    const call = async (port: string | undefined, token: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v2${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null };
    };
    const valueOnA = async () => {
      const res = await call(portA, dev, "GET", "/workspaces/ws-a/vars");
      return res.status === 200 ? res.json.data[0].attributes.value : res.status;
    };

    expect(await valueOnA()).toBe("eu");
    // Proof that A answers from its cache: a write that bypasses the triggers (so the counters
    // stand still) stays unseen on A, while B, which has not read it yet, sees it.
    const client = await cluster.shared.admin.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL session_replication_role = replica");
      await client.query(`UPDATE "${cluster.shared.schema}".variables SET value = 'behind-the-counters' WHERE id = $1`, [variable.id]);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    expect(await valueOnA()).toBe("eu");
    expect((await call(portB, dev, "GET", "/workspaces/ws-a/vars")).json.data[0].attributes.value).toBe("behind-the-counters");

    const patched = await call(portB, org, "PATCH", `/workspaces/ws-a/vars/${variable.id}`, { data: { type: "vars", id: variable.id, attributes: { value: "us" } } });
    expect(patched.status).toBe(200);
    expect(await valueOnA()).toBe("us");

    expect((await call(portB, org, "DELETE", `/team-projects/${grant.id}`)).status).toBe(204);
    expect(await valueOnA()).toBe(404);
    for (const h of [a, b]) h.send("stop");
    for (const exit of await Promise.all([a.exit, b.exit])) expect(exit.code, exit.stderr).toBe(0);
  }, 30_000);

  it(`${WRITERS} hosts writing directory records, grants and variables at once finish without an error and lose no write`, async () => {
    const parent = await cluster.open();
    const d = parent.runplane.directory;
    for (const [id, username] of [["user-dev", "dev"], ["user-owner", "owner"]]) await d.users.create({ id: id!, username: username! });
    const writers = Array.from({ length: WRITERS }, (_, n) => cluster.spawn("worker", `writer-${n}`, { RUNPLANE_ROLE: "writer", RUNPLANE_WRITER: String(n), RUNPLANE_ROUNDS: String(ROUNDS) }));
    expect(await runTogether(writers)).toStrictEqual(Array.from({ length: WRITERS }, () => `rounds=${ROUNDS}`));

    const onSharedWorkspace = await parent.runplane.variables.list("ws-a");
    const expected = Array.from({ length: WRITERS }, (_, n) => Array.from({ length: ROUNDS }, (_, r) => `k_${n}_${r}=v2_${n}_${r}`)).flat();
    expect(onSharedWorkspace.items.map((v) => `${v.key}=${v.value}`).sort()).toStrictEqual(expected.sort());
    const kept = WRITERS * (ROUNDS / 2);
    expect(await count(`SELECT count(*)::int AS n FROM @.projects WHERE id LIKE 'prj-w%'`)).toBe(WRITERS * ROUNDS);
    expect(await count(`SELECT count(*)::int AS n FROM @.workspaces WHERE id LIKE 'ws-w%'`)).toBe(kept);
    // A deleted workspace took its variables with it; a kept one has both of its own.
    expect(await count(`SELECT count(*)::int AS n FROM @.variables WHERE owner_id LIKE 'ws-w%'`)).toBe(kept * 2);
    expect(await count(`SELECT count(*)::int AS n FROM @.variables v LEFT JOIN @.workspaces w ON w.id = v.owner_id WHERE v.owner_kind = 'workspace' AND w.id IS NULL`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM @.team_members WHERE team_id LIKE 'team-w%'`)).toBe(WRITERS * ROUNDS * 2);
    expect(await count(`SELECT count(*)::int AS n FROM @.team_projects`)).toBe(0);
  }, 60_000);

  it("attaching tasks on one host while another host deletes them leaves no workspace task without its task", async () => {
    const parent = await cluster.open();
    const receiver = await cluster.receive({});
    const ids: string[] = [];
    for (let i = 0; i < RACED_TASKS; i++) ids.push((await parent.runplane.runTasks.tasks.create("acme", { name: `raced-${i}`, url: receiver.url("/hook") })).id);
    // The deleter walks the list backwards: the two cross in the middle, racing there.
    const racers = [
      cluster.spawn("worker", "attach", { RUNPLANE_ROLE: "attach", RUNPLANE_TASKS: ids.join(",") }),
      cluster.spawn("worker", "delete", { RUNPLANE_ROLE: "delete", RUNPLANE_TASKS: [...ids].reverse().join(",") }),
    ];
    const [attached] = await runTogether(racers);
    console.info(`orphan race over ${RACED_TASKS} tasks: ${attached} before their deletion`);

    expect(await count(`SELECT count(*)::int AS n FROM @.run_tasks`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM @.workspace_tasks w LEFT JOIN @.run_tasks t ON t.id = w.task_id WHERE t.id IS NULL`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM @.workspace_tasks`)).toBe(0);
  }, 30_000);
});
