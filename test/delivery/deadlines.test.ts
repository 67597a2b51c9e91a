import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { ResultStatusEvent, StageStatusEvent } from "../../src/index.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { callbackBody, sendCallback } from "../helpers/run-tasks.js";
import { deliveriesTo, deliveryApp, MINUTE, resultOf, rowOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decision D16 with a fake clock: the 10-minute window opens at the first delivery attempt; a
// result with no passed/failed callback by then is errored, one never delivered is unreachable,
// and the stage follows (D13). Callbacks may arrive before the integration answers our POST.

let a: DeliveryApp;
const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await a.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function loopback(reply = tasksAnswer({ kind: "respond", status: 200 })): Promise<LoopbackServer> {
  const server = await startLoopbackServer(reply);
  servers.push(server);
  return server;
}

/** A node:http integration that calls back with `status` before answering our POST with `answer`. */
async function eagerIntegration(status: "passed" | "running" | "failed", answer: number): Promise<{ url: string; posts: string[] }> {
  const posts: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, string>;
      if (body.access_token === "test-token") return void res.writeHead(200).end();
      posts.push(body.task_result_id!);
      void sendCallback(a, body.task_result_id!, body.access_token!, callbackBody(status, { message: "early" })).then((cb) => {
        res.writeHead(cb.status === 200 ? answer : 599).end();
      });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  servers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, posts };
}

function record(app: DeliveryApp): string[] {
  const seen: string[] = [];
  app.runplane.runTasks.on("result-status", (e: ResultStatusEvent) => void seen.push(`result ${e.from}->${e.to}`));
  app.runplane.runTasks.on("stage-status", (e: StageStatusEvent) => void seen.push(`stage ${e.from}->${e.to}`));
  return seen;
}

describe("delivery: callbacks that overtake the 200", () => {
  it("accepts a passed callback made before the integration answers, and the result ends passed", async () => {
    a = await deliveryApp();
    const integration = await eagerIntegration("passed", 200);
    const { resultIds, stageId } = await startRun(a, [integration.url]);
    const events = record(a);
    expect((await a.dispatcher().tick()).delivered).toBe(1);
    expect(await resultOf(a, resultIds[0]!)).toMatchObject({ status: "passed", message: "early" });
    expect((await a.runplane.runTasks.getStageById(stageId))?.status).toBe("passed");
    expect((await rowOf(a, resultIds[0]!)).deliveredAt).not.toBeNull();
    expect(events).toStrictEqual(["result pending->passed", "stage running->passed"]);
  });

  it("keeps a running result running when the 200 follows a running callback", async () => {
    a = await deliveryApp();
    const integration = await eagerIntegration("running", 200);
    const { resultIds } = await startRun(a, [integration.url]);
    await a.dispatcher().tick();
    expect((await resultOf(a, resultIds[0]!)).status).toBe("running");
  });

  it("sends nothing more when the integration called back but answered 500", async () => {
    a = await deliveryApp();
    const integration = await eagerIntegration("failed", 500);
    const { resultIds } = await startRun(a, [integration.url]);
    expect((await a.dispatcher().tick()).failed).toBe(1);
    a.clock.advance(MINUTE);
    expect((await a.dispatcher().tick()).attempted).toBe(0);
    expect(integration.posts).toHaveLength(1);
    expect(await resultOf(a, resultIds[0]!)).toMatchObject({ status: "failed" });
    expect((await rowOf(a, resultIds[0]!)).closedAt).not.toBeNull();
  });
});

describe("delivery: the deadline (D16)", () => {
  it("errors a delivered result with no final callback at exactly 10 minutes after the first attempt", async () => {
    a = await deliveryApp();
    const receiver = await loopback();
    const { resultIds, stageId } = await startRun(a, [receiver.url("/hook")]);
    const first = a.clock.ms;
    await a.dispatcher().tick();
    const events = record(a);
    a.clock.set(first + 10 * MINUTE - 1);
    expect((await a.dispatcher().tick()).expired).toBe(0);
    a.clock.set(first + 10 * MINUTE);
    expect((await a.dispatcher().tick()).expired).toBe(1);
    expect(await resultOf(a, resultIds[0]!)).toMatchObject({ status: "errored", message: "Task result timed out." });
    expect((await a.runplane.runTasks.getStageById(stageId))?.status).toBe("errored");
    expect(events).toStrictEqual(["result running->errored", "stage running->errored"]);
    expect(deliveriesTo(receiver.requests)).toHaveLength(1);
  });

  it("makes a never-delivered mandatory result unreachable and its stage with it; an advisory one passes the stage", async () => {
    a = await deliveryApp();
    const receiver = await loopback(tasksAnswer({ kind: "respond", status: 503 }));
    const mandatory = await startRun(a, [receiver.url("/m")]);
    const advisory = await startRun(a, [receiver.url("/a")], { level: "advisory", workspaceId: "ws-b" });
    const first = a.clock.ms;
    await a.dispatcher().tick();
    a.clock.set(first + 10 * MINUTE);
    expect((await a.dispatcher().tick()).expired).toBe(2);
    expect((await resultOf(a, mandatory.resultIds[0]!)).status).toBe("unreachable");
    expect((await a.runplane.runTasks.getStageById(mandatory.stageId))?.status).toBe("unreachable");
    expect((await resultOf(a, advisory.resultIds[0]!)).status).toBe("unreachable");
    expect((await a.runplane.runTasks.getStageById(advisory.stageId))?.status).toBe("passed");
  });

  it("starts the window at the first attempt, not when the stage started", async () => {
    a = await deliveryApp();
    const receiver = await loopback();
    const { resultIds } = await startRun(a, [receiver.url("/hook")]);
    expect((await resultOf(a, resultIds[0]!)).deadlineAt).toBeNull();
    a.clock.advance(30 * MINUTE); // no dispatcher was running
    expect((await a.dispatcher().tick()).delivered).toBe(1);
    const first = a.clock.ms;
    expect((await resultOf(a, resultIds[0]!)).deadlineAt).toBe(new Date(first + 10 * MINUTE).toISOString());
    a.clock.advance(9 * MINUTE);
    expect((await a.dispatcher().tick()).expired).toBe(0);
    const token = (JSON.parse(deliveriesTo(receiver.requests)[0]!.body.toString()) as { access_token: string }).access_token;
    expect((await sendCallback(a, resultIds[0]!, token, callbackBody("passed"))).status).toBe(200);
  });

  it("restarts an idle window on running callbacks, never past the max (deadline option)", async () => {
    a = await deliveryApp({ deadline: { idle: "10m", max: "15m" } });
    const receiver = await loopback();
    const { resultIds } = await startRun(a, [receiver.url("/hook")]);
    const first = a.clock.ms;
    await a.dispatcher().tick();
    const token = (JSON.parse(deliveriesTo(receiver.requests)[0]!.body.toString()) as { access_token: string }).access_token;
    a.clock.set(first + 8 * MINUTE);
    expect((await sendCallback(a, resultIds[0]!, token, callbackBody("running"))).status).toBe(200);
    a.clock.set(first + 14 * MINUTE);
    expect((await a.dispatcher().tick()).expired).toBe(0);
    expect((await sendCallback(a, resultIds[0]!, token, callbackBody("running"))).status).toBe(200);
    a.clock.set(first + 15 * MINUTE);
    expect((await a.dispatcher().tick()).expired).toBe(1);
    expect(await resultOf(a, resultIds[0]!)).toMatchObject({ status: "errored", message: "Task result timed out." });
  });

  it("neither schedules nor starts an attempt at the deadline itself; a millisecond before, the retry stands", async () => {
    a = await deliveryApp();
    const receiver = await loopback(tasksAnswer({ kind: "respond", status: 503 }));
    const onTime = await startRun(a, [receiver.url("/a")]);
    await a.dispatcher().tick();
    a.clock.advance(1);
    const later = await startRun(a, [receiver.url("/b")], { workspaceId: "ws-b" });
    await a.dispatcher().tick();
    const deadline = Date.parse((await resultOf(a, onTime.resultIds[0]!)).deadlineAt!);
    expect(Date.parse((await resultOf(a, later.resultIds[0]!)).deadlineAt!)).toBe(deadline + 1);
    // The second failure waits 2 s (random 0): from here it ends exactly at the first deadline.
    a.clock.set(deadline - 2_000);
    expect(await a.dispatcher().tick()).toMatchObject({ attempted: 2, failed: 2, expired: 0 });
    expect(await rowOf(a, onTime.resultIds[0]!)).toMatchObject({ attempt: 2, closedAt: new Date(deadline - 2_000).toISOString(), lastError: "responded with 503" });
    expect(await rowOf(a, later.resultIds[0]!)).toMatchObject({ attempt: 2, closedAt: null, dueAt: new Date(deadline).toISOString() });
    // Claimed at its own deadline, that row is closed unsent and its result swept.
    const sent = deliveriesTo(receiver.requests).length;
    a.clock.set(deadline + 1);
    expect(await a.dispatcher().tick()).toMatchObject({ attempted: 0, expired: 2 });
    expect(deliveriesTo(receiver.requests)).toHaveLength(sent);
    expect(await rowOf(a, later.resultIds[0]!)).toMatchObject({ attempt: 2, closedAt: new Date(deadline + 1).toISOString() });
  });

  it("never changes a final result and settles a stage left running with only final results", async () => {
    a = await deliveryApp();
    const receiver = await loopback();
    const { resultIds, stageId } = await startRun(a, [receiver.url("/hook")]);
    await a.dispatcher().tick();
    // A process stopped between a result's final write and its stage's recompute.
    const result = await resultOf(a, resultIds[0]!);
    const passed = { ...result, status: "passed" as const, version: result.version + 1 };
    await a.storage.taskResults.transition(result.id, { statuses: ["running"], version: result.version }, passed);
    expect((await a.runplane.runTasks.getStageById(stageId))?.status).toBe("running");
    a.clock.advance(11 * MINUTE);
    expect((await a.dispatcher().tick()).expired).toBe(0);
    expect(await resultOf(a, resultIds[0]!)).toStrictEqual(passed);
    expect((await a.runplane.runTasks.getStageById(stageId))?.status).toBe("passed");
  });
});
