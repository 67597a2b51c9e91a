import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyring, generateKey } from "../../src/index.js";
import { createTestApp } from "../helpers/app.js";
import { postgresReachable } from "../helpers/postgres.js";
import { proxiedPostgres, type ProxiedPostgres } from "../helpers/proxied-postgres.js";
import { attachTask, callbackBody, createTask, fakeClock, outcomeItem, payloadOf, sendCallback, type RunTaskApp } from "../helpers/run-tasks.js";

// Decision D28: the connection is cut right after the server committed a callback and
// before its answer reached runplane (the proxy drops the COMMIT's CommandComplete). runplane can
// only answer 503; the integration's retry, the same callback, must then be answered 200 (not 409),
// with the result and its outcomes stored once and the stage settled.

const reachable = await postgresReachable("postgres cut after commit");

describe.skipIf(!reachable)("a callback whose COMMIT answer is cut off (D28)", () => {
  let db: ProxiedPostgres;
  let app: RunTaskApp;

  beforeAll(async () => {
    db = await proxiedPostgres("cutcommit", { max: 4 });
    const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
    const clock = fakeClock();
    const base = await createTestApp({ storage: db.storage, keyring, clock, publicUrl: "https://runplane.example", host: false });
    app = Object.assign(base, { keyring, clock });
  });
  afterAll(async () => {
    await db?.close(() => app?.runplane.close());
  });

  it("is answered 503, then 200 when sent again, stored once, its stage settled", async () => {
    await attachTask(app, await createTask(app, "cut"), "mandatory");
    const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-cut" });
    await app.runplane.runTasks.startStage(run.id, stages[0]!.stage);
    const [result] = await app.runplane.runTasks.listResults(stages[0]!.id);
    const token = (await payloadOf(db.storage, app.keyring, result!.id)).access_token as string;
    const final = callbackBody("failed", { message: "2 findings" }, [outcomeItem("f1"), outcomeItem("f2")]);

    const cut = db.proxy.cutAfter("COMMIT\0");
    const first = await sendCallback(app, result!.id, token, final);
    await cut;
    expect(first.status, first.text).toBe(503);
    expect(first.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);

    const retry = await sendCallback(app, result!.id, token, final);
    expect(retry.status, retry.text).toBe(200);
    expect(await app.runplane.runTasks.getResult(result!.id)).toMatchObject({ status: "failed", message: "2 findings", outcomesCount: 2 });
    const outcomes = await db.storage.taskResultOutcomes.list(result!.id, { sort: "position" }, { offset: 0, limit: 10 });
    expect(outcomes.items.map((o) => o.outcomeId)).toStrictEqual(["f1", "f2"]);
    expect((await db.storage.taskStages.get(stages[0]!.id))?.status).toBe("failed");
  });
});
