import { describe, expect, it, vi } from "vitest";
import { postgresReachable } from "../helpers/postgres.js";
import { attachTasks, useCluster, type HostProcess, type Parent } from "./cluster.js";

// Decision D27 in real processes: a host's dispatcher whose next poll is ten minutes away still
// sends a stage started elsewhere (NOTIFY runplane_deliveries), catches up after its LISTEN
// connection is killed, and survives the server killing its idle pool connections. No stopwatch:
// each case ends long before such a poll could come, so a request that arrives at all came from a
// wake-up (or a catch-up pass), and `sent` says which host sent it.

const reachable = await postgresReachable("multihost wake-ups");
/** Longer than any case here may run (30 s). */
const POLL_MS = "600000";

describe.skipIf(!reachable)("several hosts on one database: wake-ups", () => {
  const cluster = useCluster("wakeups");
  let parent: Parent;
  /** Resolves when the integration receives the request of a result, by result id. */
  const arrivals = new Map<string, { arrived: Promise<void>; arrive(): void }>();
  const arrival = (resultId: string) => {
    let entry = arrivals.get(resultId);
    if (!entry) {
      let arrive = (): void => undefined;
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      arrivals.set(resultId, (entry = { arrived, arrive }));
    }
    return entry;
  };

  const host = async (name: string, env: Record<string, string> = {}): Promise<HostProcess> => {
    const h = cluster.spawn("host", name, env);
    await h.line(/^ready/);
    return h;
  };
  /** A dispatching host whose next poll is after the case's end: only wake-ups move it once ready. */
  const slowPoller = (name: string) => host(name, { RUNPLANE_DISPATCHERS: "1", RUNPLANE_POLL_MS: POLL_MS });
  /** Runs of one result each (one task), created through the parent; the receiver reports each arrival. */
  async function world(runs: number) {
    arrivals.clear();
    parent = await cluster.open();
    const receiver = await cluster.receive({ "/hook": (body) => (arrival(String(body.task_result_id)).arrive(), 200) });
    await attachTasks(parent.runplane, [receiver.url("/hook")]);
    const created = [];
    for (let i = 0; i < runs; i++) {
      const { run, stages } = await parent.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
      const [result] = await parent.runplane.runTasks.listResults(stages[0]!.id);
      created.push({ runId: run.id, resultId: result!.id });
    }
    return created;
  }
  /** The result's request reached the integration (bounded by the case's timeout only). */
  const delivered = (resultId: string) => arrival(resultId).arrived;
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

  it("a stage started on host A reaches the integration through host B's dispatcher, whose next poll is minutes away", async () => {
    const [run] = await world(1);
    const a = await host("wake-a");
    // Ready: B's start-up passes are over and it listens; A runs no dispatcher.
    const b = await slowPoller("wake-b");
    a.send(`start ${run!.runId}`);
    await a.line(/^ok start$/);
    await delivered(run!.resultId);
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
    // Only the catch-up pass once B listens again can send it.
    await delivered(first!.resultId);

    // B listens on its new connection by now (the catch-up follows the LISTEN): only a wake-up
    // heard on it can send this one.
    await parent.runplane.runTasks.startStage(second!.runId, "post_plan");
    await delivered(second!.resultId);
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
    await delivered(run!.resultId);
    expect(await stop(b)).toStrictEqual([1]);
    expect(b.stderr()).not.toContain('"level":"error"');
  }, 30_000);
});
