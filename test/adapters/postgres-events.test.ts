import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPostgresStorage, type PostgresStorage, type StatusChange } from "../../adapters/postgres/index.js";
import { parseStatusChange } from "../../adapters/postgres/events.js";
import { createDispatcher, createRunplane, silentLogger } from "../../src/index.js";
import type { ResultStatusEvent, StageStatusEvent } from "../../src/services/run-task-events.js";
import { at } from "../../src/testing/conformance/fixtures.js";
import { delivery, result, rid, run, stage, started } from "../../src/testing/conformance/run-task-fixtures.js";
import { createTestApp } from "../helpers/app.js";
import { firstPassOver } from "../helpers/dispatcher-passes.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";

// Decision D27: every stage and result status change sends NOTIFY runplane_events inside its
// transaction; each storage instance hears the other instances' changes and never its own, so
// runTasks.on(...) in every process hears every change exactly once.

const reachable = await postgresReachable("postgres events");
const PENDING = { statuses: ["pending" as const], version: 1 };
const WINDOW = { ms: 600_000, maxMs: null };

describe.skipIf(!reachable)("postgres: status changes across instances", () => {
  const pools: pg.Pool[] = [];
  const schemas: string[] = [];
  const stores: PostgresStorage[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    for (const schema of schemas.splice(0)) await dropSchema(admin, schema);
    await admin.end();
    for (const pool of pools.splice(0)) await pool.end();
  });
  /** One storage per pool (each stands for a process), all on `schema`; `name` is the first pool's `application_name`. */
  const open = async (count: number, schema = uniqueSchema("events"), name?: string): Promise<PostgresStorage[]> => {
    schemas.push(schema);
    const opened: PostgresStorage[] = [];
    for (let i = 0; i < count; i++) {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 3, ...(i === 0 && name ? { application_name: name } : {}) });
      pools.push(pool);
      opened.push(await createPostgresStorage(pool, { schema }));
    }
    stores.push(...opened);
    return opened;
  };
  const heard = async (s: PostgresStorage) => {
    const changes: StatusChange[] = [];
    await s.changes.subscribe((change) => changes.push(change));
    return changes;
  };
  /**
   * Starts the stage of a further run (`n` > 1) stored through `s`: a change stored after every
   * earlier one, so a listener that has heard it has heard everything committed before it
   * (PostgreSQL delivers notifications in commit order). The tests use it as a fence instead of
   * waiting a while to see that nothing more comes.
   */
  const startAnother = async (s: PostgresStorage, n: number) => {
    const next = { run: run({ id: rid("run", n) }), stage: stage({ id: rid("ts", n), runId: rid("run", n) }) };
    const r = result({ id: rid("taskrs", n), stageId: next.stage.id, runId: next.run.id });
    await s.runs.create(next.run, [next.stage], [r]);
    const row = delivery({ id: rid("dlv", n), taskResultId: r.id, stageId: next.stage.id, runId: next.run.id });
    await s.taskStages.start(started(next.stage), PENDING, [{ next: { ...r, version: 2 }, expected: PENDING }], [row]);
    return next.stage.id;
  };
  /** A run with one stage and one result, stored through `s`. */
  const create = async (s: PostgresStorage) => {
    const r = result({ id: rid("taskrs", 1) });
    await s.runs.create(run(), [stage()], [r]);
    return { r, row: delivery({ taskResultId: r.id }), write: { next: { ...r, accessTokenDigest: "digest", version: 2 }, expected: PENDING } };
  };

  it("reports a change one instance stored to the other once, never to itself", async () => {
    const [a, b] = (await open(2)) as [PostgresStorage, PostgresStorage];
    const [onA, onB] = [await heard(a), await heard(b)];
    const { row, write } = await create(a);
    expect(await a.taskStages.start(started(stage()), PENDING, [write], [row])).not.toBeNull();

    const stageChange = { kind: "stage", stageId: stage().id, runId: run().id, workspaceId: stage().workspaceId, stage: "post_plan", from: "pending", to: "running", at: started(stage()).updatedAt };
    await vi.waitFor(() => expect(onB).toStrictEqual([stageChange]), { timeout: 2_000, interval: 10 });
    // B's later change reaches A after A's own would have: A hears B's only.
    const fence = await startAnother(b, 2);
    await vi.waitFor(() => expect(onA).toHaveLength(1), { timeout: 2_000, interval: 10 });
    expect(onA.map((c) => (c.kind === "stage" ? c.stageId : c.kind))).toStrictEqual([fence]);
    expect(onB).toStrictEqual([stageChange]);
  });

  it("reports `from` as the row held it, for transitions and settle advances, and nothing for a rollback, a claim or a token", async () => {
    const [a, b] = (await open(2)) as [PostgresStorage, PostgresStorage];
    const onB = await heard(b);
    const { r, row, write } = await create(a);
    // A start whose guard fails rolls back whole: no stage change is reported.
    expect(await a.taskStages.start(started(stage()), { statuses: ["pending"], version: 7 }, [write], [row])).toBeNull();
    await a.taskStages.start(started(stage()), PENDING, [write], [row]);
    // The claim opens the result's window (version 3) without changing its status.
    const [claimed] = await a.taskDeliveries.claim({ now: at(10), owner: "w", leaseMs: 30_000, limit: 1, window: WINDOW });
    const advance = { id: r.id, expected: { statuses: ["pending" as const], version: 3 }, status: "running" as const, statusTimestamps: { "running-at": at(11) }, version: 4, updatedAt: at(11) };
    const fields = { attempt: 1, closedAt: at(11), deliveredAt: at(11), lastError: null };
    expect(await a.taskDeliveries.settle([{ id: row.id, fencingToken: claimed!.row.fencingToken, type: "close", fields, result: advance }])).toStrictEqual([{ written: true, result: true }]);
    const passed = { ...(await a.taskResults.get(r.id))!, status: "passed" as const, version: 5, updatedAt: at(12) };
    // Expecting either status: `from` comes from the stored row, not from the guard.
    expect(await a.taskResults.transition(r.id, { statuses: ["pending", "running"], version: 4 }, passed)).not.toBeNull();

    const common = { taskResultId: r.id, stageId: r.stageId, runId: r.runId, stage: r.stage };
    await vi.waitFor(() => expect(onB).toHaveLength(3), { timeout: 2_000, interval: 10 });
    expect(onB.map((c) => [c.kind, c.from, c.to, c.at])).toStrictEqual([
      ["stage", "pending", "running", started(stage()).updatedAt],
      ["result", "pending", "running", at(11)],
      ["result", "running", "passed", at(12)],
    ]);
    expect(onB[2]).toStrictEqual({ kind: "result", ...common, from: "running", to: "passed", at: at(12) });
    // Nothing else came from those writes: A's next change is the next B hears.
    const fence = await startAnother(a, 2);
    await vi.waitFor(() => expect(onB).toHaveLength(4), { timeout: 2_000, interval: 10 });
    expect(onB[3]).toMatchObject({ kind: "stage", stageId: fence, from: "pending", to: "running" });
  });

  it("hears only its own schema, and stops hearing once unsubscribed", async () => {
    const [mine, other] = [(await open(1))[0]!, (await open(1))[0]!];
    const [peer] = (await open(1, schemas[0]!)) as [PostgresStorage];
    const changes: StatusChange[] = [];
    const stop = await mine.changes.subscribe((change) => changes.push(change));
    const theirs = await create(other);
    await other.taskStages.start(started(stage()), PENDING, [theirs.write], [theirs.row]);
    // A change in its own schema, stored after theirs, is the first it hears.
    const ours = await startAnother(peer, 2);
    const heardOurs = () => expect(changes.some((c) => c.kind === "stage" && c.stageId === ours)).toBe(true);
    await vi.waitFor(heardOurs, { timeout: 2_000, interval: 10 });
    expect(changes).toStrictEqual([expect.objectContaining({ kind: "stage", stageId: ours })]);

    // Unsubscribed, it hears nothing that a subscriber after it hears.
    await stop();
    const later: StatusChange[] = [];
    await mine.changes.subscribe((change) => later.push(change));
    const fence = await startAnother(peer, 3);
    await vi.waitFor(() => expect(later).toHaveLength(1), { timeout: 2_000, interval: 10 });
    expect(later[0]).toMatchObject({ kind: "stage", stageId: fence });
    expect(changes).toHaveLength(1);
  });

  it("holds one LISTEN connection for wake-ups and changes, and brings both back when the server drops it", async () => {
    const name = `rp-events-${process.pid}-${Date.now()}`;
    const [a, b] = (await open(2, uniqueSchema("shared_listen"), name)) as [PostgresStorage, PostgresStorage];
    let wakes = 0;
    const stopWakes = await a.listen(() => wakes++);
    const onA = await heard(a);
    const listening = `SELECT pid, query FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`;
    const admin = pools[1]!;
    const before = (await admin.query(listening, [name])).rows;
    expect(before).toHaveLength(1);

    await admin.query("SELECT pg_terminate_backend($1, 5000)", [before[0].pid]);
    await vi.waitFor(() => expect(wakes).toBe(1), { timeout: 5_000, interval: 10 });
    expect((await admin.query(listening, [name])).rows).toHaveLength(1);
    const { row, write } = await create(b);
    await b.taskStages.start(started(stage()), PENDING, [write], [row]);
    await vi.waitFor(() => {
      expect(wakes).toBe(2);
      expect(onA.map((c) => `${c.kind} ${c.from}->${c.to}`)).toStrictEqual(["stage pending->running"]);
    }, { timeout: 5_000, interval: 10 });

    // Wake-ups stop alone; changes still come on the same connection.
    await stopWakes();
    await startAnother(b, 2);
    await vi.waitFor(() => expect(onA).toHaveLength(2), { timeout: 5_000, interval: 10 });
    expect(wakes).toBe(2);
    // Closed, the storage gives the connection back to the host's pool, listening to nothing.
    await a.close();
    expect((await admin.query(`SELECT query FROM pg_stat_activity WHERE application_name = $1`, [name])).rows).toContainEqual({ query: "UNLISTEN *" });
    expect((await admin.query(listening, [name])).rows).toHaveLength(0);
  });

  it("ignores payloads of other schemas, of its own origin, and malformed ones", () => {
    const change = { kind: "stage", stageId: "ts-1", runId: "run-1", workspaceId: "ws-1", stage: "post_plan", from: "pending", to: "running", at: at(1) };
    const payload = (extra: object) => JSON.stringify({ schema: "s", origin: "o1", ...change, ...extra });
    expect(parseStatusChange(payload({}), "s", "o2")).toStrictEqual(change);
    expect(parseStatusChange(payload({ origin: null }), "s", "o2")).toStrictEqual(change);
    expect(parseStatusChange(payload({}), "s", "o1")).toBeNull();
    expect(parseStatusChange(payload({}), "t", "o2")).toBeNull();
    expect(parseStatusChange(payload({ kind: "run" }), "s", "o2")).toBeNull();
    expect(parseStatusChange(payload({ to: 3 }), "s", "o2")).toBeNull();
    expect(parseStatusChange("{", "s", "o2")).toBeNull();
  });
});

describe.skipIf(!reachable)("runplane: events across hosts sharing one database", () => {
  it("a listener hears each change once, whichever host made it", async () => {
    const schema = uniqueSchema("hosts_events");
    const storageA = await createPostgresStorage(DATABASE_URL, { schema });
    const storageB = await createPostgresStorage(DATABASE_URL, { schema });
    const a = await createTestApp({ storage: storageA });
    const b = createRunplane({ storage: storageB, logger: silentLogger, keyring: { keys: [{ id: "k1", key: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" }] } });
    try {
      const events = { a: [] as string[], b: [] as string[] };
      const record = (host: "a" | "b") => (e: StageStatusEvent | ResultStatusEvent) =>
        void events[host].push(`${"taskResultId" in e ? "result" : "stage"} ${e.from}->${e.to}`);
      for (const [host, runplane] of [["a", a.runplane], ["b", b]] as const) {
        runplane.runTasks.on("stage-status", record(host));
        runplane.runTasks.on("result-status", record(host));
      }
      expect(await a.runplane.runTasks.listening()).toBe(true);
      expect(await b.runTasks.listening()).toBe(true);

      const task = await a.runplane.runTasks.tasks.create("acme", { name: "scanner", url: "https://scanner.example/hook" });
      await a.runplane.runTasks.workspaceTasks.create("ws-a", task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
      const { run: created } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
      await a.runplane.runTasks.startStage(created.id, "post_plan");
      await b.runTasks.cancelRun(created.id);

      const expected = ["stage pending->running", "stage running->canceled", "result pending->canceled"];
      await vi.waitFor(() => {
        expect(events.a).toStrictEqual(expected);
        expect(events.b).toStrictEqual(expected);
      }, { timeout: 2_000, interval: 10 });
      // Fences instead of a pause: what a host hears from the other comes after the echo of its
      // own changes would have (commit order), so each hears the other's next change and nothing more.
      const { run: next } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-2" });
      await a.runplane.runTasks.startStage(next.id, "post_plan");
      await vi.waitFor(() => expect(events.b).toHaveLength(4), { timeout: 2_000, interval: 10 });
      expect(events.b).toStrictEqual([...expected, "stage pending->running"]);
      await b.runTasks.cancelRun(next.id);
      await vi.waitFor(() => expect(events.a).toHaveLength(6), { timeout: 2_000, interval: 10 });
      expect(events).toStrictEqual({ a: [...expected, ...expected], b: [...expected, ...expected] });
    } finally {
      await a.runplane.close();
      await b.close();
      const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      await dropSchema(admin, schema);
      await admin.end();
    }
  });

  it("a dispatcher alone hears only its own instance's stage starts, so the instance does not listen to every other host's changes", async () => {
    const schema = uniqueSchema("dispatcher_events");
    const storage = await createPostgresStorage(DATABASE_URL, { schema });
    const app = await createTestApp({ storage });
    const sent: string[] = [];
    let arrived = (): void => undefined;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    const dispatcher = createDispatcher(app.runplane, {
      transport: { send: async (req) => (sent.push(req.url), arrived(), { status: 200, headers: {}, body: "", bodyTruncated: false }), close: async () => undefined },
      pollIntervalMs: 60_000,
    });
    try {
      const firstPass = firstPassOver(app.runplane.runTasks.deliveries);
      dispatcher.start();
      await firstPass;
      const task = await app.runplane.runTasks.tasks.create("acme", { name: "scanner", url: "https://scanner.example/hook" });
      await app.runplane.runTasks.workspaceTasks.create("ws-a", task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
      const { run: created } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
      await app.runplane.runTasks.startStage(created.id, "post_plan");

      // Woken by its own start: its first pass is over and its next poll (60 s) comes after the test's timeout...
      await first;
      expect(sent).toStrictEqual(["https://scanner.example/hook"]);
      // ...without hearing, and parsing, every change the other hosts store.
      expect(await app.runplane.runTasks.listening()).toBe(false);
    } finally {
      await dispatcher.stop({ graceMs: 100 });
      await app.runplane.close();
      const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      await dropSchema(admin, schema);
      await admin.end();
    }
  });
});
