import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { resultsOf } from "../delivery/crash-checks.js";
import { DATABASE_URL, postgresReachable } from "../helpers/postgres.js";
import { startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { attachTasks, useCluster } from "./cluster.js";
import { failedAttempts, failedPasses, outageIntegration, watchFinal, type CallbackAnswer } from "./restart-support.js";

// Decisions D15, D27, D28: PostgreSQL restarts while three host processes
// deliver and integrations call back. The hosts reach the server through a loopback proxy that
// resets every connection and refuses new ones until the outage has been felt everywhere (the
// server the other suites share is never restarted); the parent's own connection stays up for
// set-up and checks. When the outage starts, requests are held at the integration (their 200
// comes while the database is away) and callbacks are waiting; more stages start while it lasts.
//
// What the dispatcher does with a 200 it cannot record: it does not keep the settlement until the
// database is back. It logs `run task delivery attempt failed`, its release fails too, and the row
// waits out its lease: then it is closed unsent if a callback made the result final meanwhile, or
// sent again (at-least-once, D15). So each result gets exactly one request more than its recorded
// attempts when its 200 came during the outage, and none more otherwise.

const reachable = await postgresReachable("multihost postgres restart");
const HOSTS = ["pg-a", "pg-b", "pg-c"];
/** Runs (two tasks each) started before the outage, and while it lasts. */
const BEFORE = 10;
const DURING = 20;
const LEASE_MS = 6_000;
/** Callback answers other than 200, 409 and 503 (D28): a 500 ends an integration's retries. */
const unexpected = (answers: CallbackAnswer[]) => answers.filter((a) => ![200, 409, 503].includes(a.status));

describe.skipIf(!reachable)("several hosts on one database: PostgreSQL restarts under load", () => {
  const cluster = useCluster("restart");
  let proxy: TcpProxy;
  beforeAll(async () => {
    const target = new URL(DATABASE_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterEach(() => proxy.open());
  afterAll(() => proxy?.close());

  it("every result ends in exactly one final state, nothing stays leased, and a request goes again only where its 200 could not be recorded", async () => {
    const parent = await cluster.open();
    const ports: number[] = [];
    const { receiver, integration } = await outageIntegration((b) => cluster.receive(b), () => ports);
    await attachTasks(parent.runplane, [receiver.url("/a"), receiver.url("/b")]);
    const runs: { runId: string; stageId: string }[] = [];
    for (let i = 0; i < BEFORE + DURING; i++) {
      const { run, stages } = await parent.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: `cv-${i}` });
      runs.push({ runId: run.id, stageId: stages[0]!.id });
    }
    const stageIds = runs.map((r) => r.stageId);
    const env = { DATABASE_URL: throughProxy(DATABASE_URL, proxy), RUNPLANE_HTTP: "1", RUNPLANE_DISPATCHERS: "1", RUNPLANE_CONCURRENCY: "32", RUNPLANE_POLL_MS: "250", RUNPLANE_LEASE_MS: String(LEASE_MS) };
    const hosts = HOSTS.map((name) => cluster.spawn("host", name, env));
    for (const h of hosts) ports.push(Number((await h.line(/^ready (\d+)$/))[1]));
    const watch = watchFinal(parent.storage, stageIds);
    const deliveryOf = async (resultId: string) => (await parent.storage.taskDeliveries.listByResult(resultId))[0]!;

    // Before: every `/a` request answered and recorded, every `/b` request held at the integration.
    for (const r of runs.slice(0, BEFORE)) await parent.runplane.runTasks.startStage(r.runId, "post_plan");
    const early = await resultsOf(parent.storage, stageIds.slice(0, BEFORE));
    await vi.waitFor(async () => {
      expect(integration.held.size).toBe(BEFORE);
      for (const r of early.filter((r) => !integration.held.has(r.id))) expect((await deliveryOf(r.id)).closedAt).not.toBeNull();
    }, { timeout: 15_000, interval: 50 });

    // The restart: the held 200s and the waiting callbacks happen while the database is away.
    const passesBefore = hosts.map(failedPasses);
    await proxy.close({ reset: true });
    for (const r of runs.slice(BEFORE)) await parent.runplane.runTasks.startStage(r.runId, "post_plan");
    integration.open();
    const heldDeliveries = await Promise.all([...integration.held].map(async (id) => (await deliveryOf(id)).id));
    // It lasts until everything it is for has been seen, not for a set time: every host's poll
    // failed on it (the stages started meanwhile wait), every held 200 could not be recorded, and
    // every callback waiting for it was answered 503.
    await vi.waitFor(() => {
      expect(unexpected(integration.answers)).toStrictEqual([]);
      hosts.forEach((h, i) => expect(failedPasses(h), HOSTS[i]).toBeGreaterThan(passesBefore[i]!));
      expect([...failedAttempts(hosts)].sort()).toStrictEqual([...heldDeliveries].sort());
      for (const r of early.filter((r) => !integration.slow.has(r.id))) expect(integration.answers.some((a) => a.resultId === r.id && a.status === 503), r.id).toBe(true);
    }, { timeout: 20_000, interval: 50 });
    await proxy.open();

    // After: every result is final, every row closed and no lease held (a row whose 200 was lost
    // waits out its lease first; the bound is only there to fail with the rows still open).
    const stuck = async () => {
      const open = [];
      for (const r of await resultsOf(parent.storage, stageIds)) {
        const row = await deliveryOf(r.id);
        if (r.status !== "passed" || row.closedAt === null || row.leaseOwner !== null) open.push(`${r.id} ${r.status} ${row.leaseOwner}`);
      }
      return open;
    };
    await vi.waitFor(async () => {
      expect(unexpected(integration.answers)).toStrictEqual([]);
      expect(await stuck()).toStrictEqual([]);
    }, { timeout: 4 * LEASE_MS, interval: 200 });
    await integration.settled();
    const sentBy: number[] = [];
    for (const h of hosts) {
      h.send("stop");
      sentBy.push(Number((await h.line(/^sent (\d+)$/))[1]));
      expect((await h.exit).code, h.stderr()).toBe(0);
    }
    const sent = sentBy.reduce((a, b) => a + b, 0);
    await watch.stop();

    const end = await resultsOf(parent.storage, stageIds);
    expect(end).toHaveLength(2 * (BEFORE + DURING));
    expect(watch.changed).toStrictEqual([]);
    for (const r of end) expect(r).toStrictEqual(watch.first.get(r.id));
    for (const stageId of stageIds) expect((await parent.storage.taskStages.get(stageId))?.status).toBe("passed");

    // One final state per result: one callback answered other than 503, a 409 only where a
    // commit cut off by the outage had already stored it.
    expect(unexpected(integration.answers)).toStrictEqual([]);
    for (const a of integration.answers) if (a.status === 503) expect(a.retryAfter).toMatch(/^[1-9][0-9]*$/);
    for (const r of end) {
      const own = integration.answers.filter((a) => a.resultId === r.id);
      const applied = own.filter((a) => a.status !== 503);
      expect(applied, r.id).toHaveLength(1);
      if (applied[0]!.status === 409) expect(own.some((a) => a.status === 503)).toBe(true);
    }

    // No attempt sent twice: the same bytes each time, each recorded attempt numbered once, and
    // one request more than recorded exactly where the 200 came during the outage.
    let received = 0;
    for (const r of end) {
      const posts = receiver.posts.get(r.id) ?? [];
      received += posts.length;
      for (const bytes of posts) expect(bytes.equals(posts[0]!)).toBe(true);
      const row = await deliveryOf(r.id);
      const recorded = (await parent.storage.deliveryAttempts.list(r.id, { offset: 0, limit: 20 })).items.map((a) => a.number).sort((a, b) => a - b);
      expect(recorded).toStrictEqual(Array.from({ length: row.attempt }, (_, i) => i + 1));
      expect(posts.length - recorded.length, r.id).toBe(integration.held.has(r.id) ? 1 : 0);
      if (integration.slow.has(r.id)) expect(posts).toHaveLength(2);
    }
    expect(sent).toBe(received);
    expect([...failedAttempts(hosts)].sort()).toStrictEqual([...heldDeliveries].sort());
    const count = (status: number) => integration.answers.filter((a) => a.status === status).length;
    console.info(`restart: requests per host ${sentBy.join("/")}, ${received - end.length} sent again, callbacks answered 503 ${count(503)}, 409 ${count(409)}`);
  }, 60_000);
});
