import { describe, expect, it, vi } from "vitest";
import { postgresReachable } from "../helpers/postgres.js";
import { attachTasks, useCluster } from "./cluster.js";

// Decision D27: 4 host processes with 2 dispatchers each share one database. The parent starts
// 50 runs of 20 results while they run; a loopback receiver counts requests per task_result_id.
// Every result gets exactly one request and no lease stays held.

const reachable = await postgresReachable("multihost fan-out");
const HOSTS = 4;
const DISPATCHERS = 2;
const TASKS = 20;
const RUNS = 50;

describe.skipIf(!reachable)("several hosts on one database: fan-out", () => {
  const cluster = useCluster("fanout");

  it(`${HOSTS} hosts x ${DISPATCHERS} dispatchers deliver ${TASKS * RUNS} results with exactly one request each and leave no lease held`, async () => {
    const { runplane } = await cluster.open();
    const receiver = await cluster.receive({ "/hook": () => 200 });
    await attachTasks(runplane, Array.from({ length: TASKS }, () => receiver.url("/hook")));
    const hosts = Array.from({ length: HOSTS }, (_, i) =>
      cluster.spawn("host", `fanout-${i}`, { RUNPLANE_DISPATCHERS: String(DISPATCHERS), RUNPLANE_POLL_MS: "500" }),
    );
    await Promise.all(hosts.map((h) => h.line(/^ready/)));

    const resultIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const { run, stages } = await runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
      await runplane.runTasks.startStage(run.id, "post_plan");
      for (const r of await runplane.runTasks.listResults(stages[0]!.id)) resultIds.push(r.id);
    }
    expect(resultIds).toHaveLength(TASKS * RUNS);
    await vi.waitFor(() => expect(receiver.posts.size).toBe(resultIds.length), { timeout: 30_000, interval: 50 });

    for (const h of hosts) h.send("stop");
    const sent = await Promise.all(hosts.map(async (h) => (await h.line(/^sent (.*)$/))[1]!.split(",").map(Number)));
    for (const exit of await Promise.all(hosts.map((h) => h.exit))) expect(exit.code, exit.stderr).toBe(0);

    for (const id of resultIds) expect(receiver.posts.get(id), id).toHaveLength(1);
    const perHost = sent.map((counts) => counts.reduce((a, b) => a + b, 0));
    expect(perHost.reduce((a, b) => a + b, 0)).toBe(resultIds.length);
    // SKIP LOCKED spreads the work: no single host sent everything.
    expect(Math.max(...perHost)).toBeLessThan(resultIds.length);

    const { admin, schema } = cluster.shared;
    const open = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".task_deliveries WHERE closed_at IS NULL OR delivered_at IS NULL OR lease_owner IS NOT NULL`);
    expect(open.rows).toStrictEqual([{ n: 0 }]);
    const statuses = await admin.query(`SELECT status, count(*)::int AS n FROM "${schema}".task_results GROUP BY status`);
    expect(statuses.rows).toStrictEqual([{ status: "running", n: resultIds.length }]);
    console.info(`fan-out: requests per host ${perHost.join(", ")} (per dispatcher ${sent.map((c) => c.join("+")).join(", ")})`);
  }, 60_000);
});
