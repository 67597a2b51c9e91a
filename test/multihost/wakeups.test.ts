import { describe, expect, it, vi } from "vitest";
import { postgresReachable } from "../helpers/postgres.js";
import { attachTasks, useCluster, type HostProcess, type Parent } from "./cluster.js";

// Decision D27 in real processes: a host's dispatcher that polls only every minute still sends a
// stage started elsewhere at once (NOTIFY runplane_deliveries), catches up after its LISTEN
// connection is killed, and survives the server killing its idle pool connections.

const reachable = await postgresReachable("multihost wake-ups");
const MINUTE = "60000";

describe.skipIf(!reachable)("several hosts on one database: wake-ups", () => {
  const cluster = useCluster("wakeups");
  let parent: Parent;
  const arrivals = new Map<string, number>();

  const host = async (name: string, env: Record<string, string> = {}): Promise<HostProcess> => {
    const h = cluster.spawn("host", name, env);
    await h.line(/^ready/);
    return h;
  };
  /** A dispatching host that polls once a minute: between polls only wake-ups move it. */
  const slowPoller = (name: string) => host(name, { RUNPLANE_DISPATCHERS: "1", RUNPLANE_POLL_MS: MINUTE });
  /** Runs of one result each (one task), created through the parent; the receiver notes arrival times. */
  async function world(runs: number) {
    arrivals.clear();
    parent = await cluster.open();
    const receiver = await cluster.receive({ "/hook": (body) => (arrivals.set(body.task_result_id, Date.now()), 200) });
    await attachTasks(parent.runplane, [receiver.url("/hook")]);
    const created = [];
    for (let i = 0; i < runs; i++) {
      const { run, stages } = await parent.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
      const [result] = await parent.runplane.runTasks.listResults(stages[0]!.id);
      created.push({ runId: run.id, resultId: result!.id });
    }
    return created;
  }
  const deliveredWithin = (resultId: string, ms: number) => vi.waitFor(() => expect(arrivals.has(resultId)).toBe(true), { timeout: ms, interval: 10 });
  const stop = async (h: HostProcess): Promise<number[]> => {
    h.send("stop");
    const sent = (await h.line(/^sent (.*)$/))[1]!.split(",").map(Number);
    const exit = await h.exit;
    expect(exit.code, exit.stderr).toBe(0);
    return sent;
  };
  /**
   * Terminates the backends of host `name` whose last statement matches `query` (LIKE) and that
   * have been idle for a while (the host's start-up passes are over: no statement of one is about
   * to follow on the same connection), waiting until each has exited; resolves how many.
   */
  const terminate = async (name: string, query: string, like = true): Promise<number> => {
    const { rows } = await cluster.shared.admin.query(
      `SELECT pg_terminate_backend(pid, 5000) AS ok FROM pg_stat_activity
       WHERE application_name = $1 AND state = 'idle' AND now() - state_change > interval '300 ms' AND (query LIKE $2) = $3`,
      [name, query, like],
    );
    return rows.filter((r: { ok: boolean }) => r.ok).length;
  };

  it("a stage started on host A reaches the integration through host B's dispatcher in under 1 s while B polls every 60 s", async () => {
    const [run] = await world(1);
    const a = await host("wake-a");
    const b = await slowPoller("wake-b");
    const startedAt = Date.now();
    a.send(`start ${run!.runId}`);
    await a.line(/^ok start$/);
    await deliveredWithin(run!.resultId, 5_000);
    const latency = arrivals.get(run!.resultId)! - startedAt;
    console.info(`wake-up: stage started on A, request from B after ${latency} ms`);
    expect(latency).toBeLessThan(1_000);
    expect(await stop(b)).toStrictEqual([1]);
    await stop(a);
  }, 30_000);

  it("catches up after its LISTEN connection is killed, and hears later wake-ups on the new one", async () => {
    const [first, second] = await world(2);
    const b = await slowPoller("relisten-b");
    // Frozen, B cannot reconnect before the stage starts: that wake-up is lost for good.
    b.child.kill("SIGSTOP");
    await vi.waitFor(async () => expect(await terminate("relisten-b", "LISTEN%")).toBe(1), { timeout: 5_000, interval: 50 });
    await parent.runplane.runTasks.startStage(first!.runId, "post_plan");
    b.child.kill("SIGCONT");
    await deliveredWithin(first!.resultId, 5_000);

    const startedAt = Date.now();
    await parent.runplane.runTasks.startStage(second!.runId, "post_plan");
    await deliveredWithin(second!.resultId, 5_000);
    expect(arrivals.get(second!.resultId)! - startedAt).toBeLessThan(1_000);
    expect(await stop(b)).toStrictEqual([2]);
  }, 30_000);

  it("survives the server terminating its idle pool connections, and keeps delivering", async () => {
    const [run] = await world(1);
    const b = await slowPoller("idle-b");
    await vi.waitFor(async () => expect(await terminate("idle-b", "LISTEN%", false)).toBeGreaterThanOrEqual(1), { timeout: 5_000, interval: 50 });
    // The pool hears it while the connection sits idle: without the adapter's listener, this
    // is where the process would crash (an unhandled 'error' event).
    await vi.waitFor(() => expect(b.stderr()).toContain("an idle connection failed (57P01)"), { timeout: 5_000, interval: 10 });
    await parent.runplane.runTasks.startStage(run!.runId, "post_plan");
    await deliveredWithin(run!.resultId, 5_000);
    expect(await stop(b)).toStrictEqual([1]);
    expect(b.stderr()).not.toContain('"level":"error"');
  }, 30_000);
});
