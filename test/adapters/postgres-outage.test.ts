import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { createDispatcher, createKeyring, generateKey } from "../../src/index.js";
import { createTestApp, type TestResponse } from "../helpers/app.js";
import { postgresReachable } from "../helpers/postgres.js";
import { proxiedPostgres, type ProxiedPostgres } from "../helpers/proxied-postgres.js";
import { attachTask, callbackBody, createTask, fakeClock, outcomeItem, payloadOf, sendCallback, type RunTaskApp } from "../helpers/run-tasks.js";
import type { TcpProxy } from "../helpers/tcp-proxy.js";

// Decision D28: PostgreSQL goes away while integrations send their callbacks.
// The host's pool reaches the server through a loopback proxy that is closed (every connection
// dropped, new ones refused) and reopened, so the server the other suites share is never
// restarted. Every answer is 2xx, 4xx or 503 with Retry-After, never 500; an integration that
// retries its 503s has every final status stored, with its outcomes, exactly once. Each phase
// ends on what was observed, not on a clock: the cut comes once the database has answered a
// callback of the first third (the rest are under way), it lasts until every integration of the
// second third has been answered 503, and the last third calls once it is back.

const reachable = await postgresReachable("postgres outage");

const RUNS = 6;
const TASKS = 8;
/** How long an integration waits before sending a callback again after a 503 (its own pace, not a window). */
const RETRY_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const deferred = () => {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve: () => resolve() };
};

describe.skipIf(!reachable)("PostgreSQL going away under callback load (D28)", () => {
  let db: ProxiedPostgres;
  let proxy: TcpProxy;
  let storage: PostgresStorage;
  let app: RunTaskApp;

  beforeAll(async () => {
    db = await proxiedPostgres("outage", { max: 8, connectionTimeoutMillis: 1000 });
    ({ proxy, storage } = db);
    const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
    const clock = fakeClock();
    const base = await createTestApp({ storage, keyring, clock, publicUrl: "https://runplane.example" });
    app = Object.assign(base, { keyring, clock });
  });
  afterAll(async () => {
    await db?.close(() => app?.runplane.close());
  });

  it("answers only 2xx, 4xx or 503 with Retry-After, and applies every callback retried after its 503", async () => {
    for (let i = 0; i < TASKS; i++) await attachTask(app, await createTask(app, `task${i}`), i % 2 === 0 ? "mandatory" : "advisory");
    const results: { id: string; stageId: string; token: string; final: "passed" | "failed" }[] = [];
    for (let r = 0; r < RUNS; r++) {
      const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: `cv-${r}` });
      await app.runplane.runTasks.startStage(run.id, stages[0]!.stage);
      for (const result of await app.runplane.runTasks.listResults(stages[0]!.id)) {
        const token = (await payloadOf(storage, app.keyring, result.id)).access_token as string;
        results.push({ id: result.id, stageId: stages[0]!.id, token, final: results.length % 3 === 0 ? "failed" : "passed" });
      }
    }
    await createDispatcher(app.runplane).tick();

    const answers: { resultId: string; res: TestResponse }[] = [];
    /** Result ids whose final callback was answered 503 at least once. */
    const retriedFinal = new Set<string>();
    const half = (r: (typeof results)[number]): boolean => results.indexOf(r) % 2 === 0;
    let stored = (): void => undefined;
    /** Resolves once any callback has been answered 2xx. */
    const firstStored = new Promise<void>((resolve) => (stored = resolve));
    /** Per result: resolves once one of its callbacks has been answered 503 (or another 5xx). */
    const refusedOnce = new Map(results.map((r) => [r.id, deferred()]));
    /** An integration as D28 expects: each callback is sent again after a 503, until it is answered otherwise. */
    const integrate = async (r: (typeof results)[number]): Promise<void> => {
      const final = callbackBody(r.final, { message: `done ${r.id}` }, [outcomeItem(`o-${r.id}`)]);
      // Half the integrations say `running` first; the others send only their final status.
      const bodies = half(r) ? [callbackBody("running"), final] : [final];
      for (const body of bodies) {
        for (;;) {
          const res = await sendCallback(app, r.id, r.token, body);
          answers.push({ resultId: r.id, res });
          if (res.status >= 200 && res.status < 300) stored();
          // The outage felt (a wrong 500 too, so the checks below name it instead of a timeout).
          if (res.status >= 500) refusedOnce.get(r.id)!.resolve();
          if (res.status !== 503) break;
          if (body === final) retriedFinal.add(r.id);
          await sleep(RETRY_MS);
        }
      }
    };

    const third = results.length / 3;
    const [early, during, late] = [0, 1, 2].map((k) => results.slice(k * third, (k + 1) * third)) as [typeof results, typeof results, typeof results];
    // Before: the first third calls back at once; the database answers one, the rest are under way.
    const load = early.map(integrate);
    await firstStored;
    await proxy.close();
    // During: the second third calls back; the outage lasts until each of them has been refused.
    load.push(...during.map(integrate));
    await Promise.all(during.map((r) => refusedOnce.get(r.id)!.promise));
    await proxy.open();
    // After: the last third calls back, and every integration's retries end.
    load.push(...late.map(integrate));
    await Promise.all(load);

    for (const { res } of answers) {
      const ok = (res.status >= 200 && res.status < 300) || (res.status >= 400 && res.status < 500) || res.status === 503;
      expect(ok, `${res.status} ${res.text}`).toBe(true);
      if (res.status === 503) {
        expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
        expect(res.json.errors[0]).toMatchObject({ status: "503", title: "service unavailable" });
      }
    }
    const unavailable = answers.filter((a) => a.res.status === 503).length;
    // The outage was felt: without it this test would prove nothing.
    expect(unavailable).toBeGreaterThan(0);
    expect(retriedFinal.size).toBeGreaterThan(0);
    // Where a final callback's commit was cut off from its answer, its retry finds the same
    // callback stored and is answered 200, never 409.
    expect(answers.filter((a) => a.res.status === 409).map((a) => a.resultId)).toStrictEqual([]);

    for (const r of results) {
      const stored = await app.runplane.runTasks.getResult(r.id);
      expect(stored?.status, r.id).toBe(r.final);
      expect(stored?.message).toBe(`done ${r.id}`);
      const outcomes = await storage.taskResultOutcomes.list(r.id, { sort: "position" }, { offset: 0, limit: 10 });
      expect(outcomes.items.map((o) => o.outcomeId)).toEqual([`o-${r.id}`]);
    }
    // A stage whose recompute the outage cut off is settled by the next sweep.
    await createDispatcher(app.runplane).tick();
    for (const stageId of new Set(results.map((r) => r.stageId))) {
      const stage = await storage.taskStages.get(stageId);
      expect(["passed", "failed"], stageId).toContain(stage?.status);
    }
  }, 60_000);
});
