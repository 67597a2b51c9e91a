import { buildConnector } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import type { EgressConnector } from "../../src/delivery/egress.js";
import { createEgress, createResultsPage, type EgressOptions } from "../../src/index.js";
import { loopbacksClosedAfterEach, type LoopbackServer } from "../helpers/loopback-server.js";
import { taskBody } from "../helpers/run-tasks.js";
import { deliveryApp, noRealDns, resultOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decision D38: a destination that is not a public address, reached only because an allowlist
// entry admits it, is an internal service as far as runplane knows; whoever may manage run tasks
// must not read its answers through runplane. Its answers are kept as their status line only (in
// the attempt's excerpt, the result's words and the verification's 422) unless the operator opts in
// with `egress.excerpts: "full"`.

const SECRET = "internal-admin-password: hunter2-0f3c9a7b1e";
const ANSWER = { kind: "respond" as const, status: 404, headers: { "content-type": "text/plain" }, body: `not here\n${SECRET}\n` };

let a: DeliveryApp | undefined;
const loopback = loopbacksClosedAfterEach();
afterEach(async () => {
  await a?.close();
  a = undefined;
});

/** An app allowed to reach 127.0.0.1 through `127.0.0.1/32`, with the given excerpt mode. */
const appWith = (excerpts?: "full") =>
  deliveryApp({
    egress: { allow: ["127.0.0.1/32"], resolve: noRealDns, ...(excerpts ? { excerpts } : {}) },
    // The default egress of such an app (support.ts's keeps answers whole, as from a public integration).
    transport: createEgress({ allow: ["127.0.0.1/32"], timeoutMs: 300, resolve: noRealDns, ...(excerpts ? { excerpts } : {}) }),
  });

async function deliveredOnce(server: LoopbackServer) {
  const { runId, resultIds } = await startRun(a!, [server.url("/hook")]);
  expect((await a!.dispatcher().tick()).failed).toBe(1);
  return { runId, resultId: resultIds[0]! };
}

async function resultsPage(runId: string): Promise<string> {
  const page = createResultsPage(a!.runplane, { prefix: "/app" });
  const response = await page(new Request(`http://localhost/app/runs/${runId}`, { headers: { authorization: `Bearer ${a!.ownerToken}` } }));
  expect(response.status).toBe(200);
  return response.text();
}

describe("answers from destinations reached through the allowlist (D38)", () => {
  it("keeps only the status line of an attempt's answer: in the attempts over HTTP, the result and the results page", async () => {
    a = await appWith();
    const server = await loopback(tasksAnswer(ANSWER));
    const { runId, resultId } = await deliveredOnce(server);

    const res = await a.call("GET", `/api/v2/task-results/${resultId}/delivery-attempts`);
    expect(res.status).toBe(200);
    expect(res.json.data[0].attributes).toMatchObject({
      status: 404,
      detail: "responded with 404",
      "response-excerpt": "HTTP 404 Not Found (body not kept: the destination is reached through the egress allowlist)",
      "response-excerpt-truncated": false,
    });
    expect(res.text).not.toContain("hunter2");
    const result = await a.call("GET", `/api/v2/task-results/${resultId}?include=delivery-attempts`);
    expect(result.text).not.toContain("hunter2");
    expect(JSON.stringify(await resultOf(a, resultId))).not.toContain("hunter2");
    expect(JSON.stringify(await a.storage.taskDeliveries.listByResult(resultId))).not.toContain("hunter2");
    const html = await resultsPage(runId);
    expect(html).toContain("HTTP 404 Not Found (body not kept: the destination is reached through the egress allowlist)");
    expect(html).not.toContain("hunter2");
  });

  it("keeps the answer when the operator opts in with excerpts: \"full\"", async () => {
    a = await appWith("full");
    const server = await loopback(tasksAnswer(ANSWER));
    const { runId, resultId } = await deliveredOnce(server);
    const res = await a.call("GET", `/api/v2/task-results/${resultId}/delivery-attempts`);
    expect(res.json.data[0].attributes["response-excerpt"]).toBe(`not here\n${SECRET}\n`);
    expect((await a.storage.taskDeliveries.listByResult(resultId))[0]!.lastError).toContain("hunter2");
    expect(await resultsPage(runId)).toContain("hunter2");
  });

  it("does not quote the answer in the 422 of a verification, unless the operator opts in", async () => {
    a = await appWith();
    const server = await loopback(ANSWER);
    const create = (app: DeliveryApp) => app.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "scanner", url: server.url("/hook") }) });
    const refused = await create(a);
    expect(refused.status).toBe(422);
    expect(refused.json.errors[0].detail).toMatch(
      /^The run task URL responded with 404 to the verification request \(its answer's body is not shown: the destination is reached through the egress allowlist\); it must answer 200\./,
    );
    expect(refused.text).not.toContain("hunter2");

    const full = await appWith("full");
    try {
      const quoted = await create(full);
      expect(quoted.status).toBe(422);
      expect(quoted.json.errors[0].detail).toContain(`responded with 404 to the verification request: not here ${SECRET}; it must answer 200.`);
    } finally {
      await full.close();
    }
  });

  it("keeps the answer of a public destination", async () => {
    // The name resolves to a public address; the connector (below the guard) dials the loopback
    // receiver instead, so nothing leaves the machine.
    const server = await loopback(ANSWER);
    const dial = buildConnector({ timeout: 1_000 });
    const connector: EgressConnector = (opts, callback) => dial({ ...opts, hostname: "127.0.0.1", port: String(server.port) }, callback);
    const options: EgressOptions = { allow: ["127.0.0.1/32"], resolve: async () => [{ address: "8.8.8.8", family: 4 }], connector, timeoutMs: 1_000 };
    const transport = createEgress(options);
    try {
      const res = await transport.send({ url: "http://integration.example/hook", headers: {}, body: "{}" });
      expect(res).toMatchObject({ status: 404, body: `not here\n${SECRET}\n` });
      expect(res.bodyWithheld).toBeUndefined();
      // The same transport, the same answer from the allowlisted loopback address: status only.
      const direct = await transport.send({ url: server.url("/hook"), headers: {}, body: "{}" });
      expect(direct).toMatchObject({ status: 404, body: "", bodyWithheld: true });
    } finally {
      await transport.close();
    }
  });

  it("keeps only the status of an answer from a name entry's private address, and keeps an empty answer as it was", async () => {
    const server = await loopback(ANSWER);
    const transport = createEgress({ allow: ["receiver.test"], resolve: async () => [{ address: "127.0.0.1", family: 4 }], timeoutMs: 1_000 });
    try {
      expect(await transport.send({ url: `http://receiver.test:${server.port}/hook`, headers: {}, body: "{}" })).toMatchObject({ status: 404, body: "", bodyWithheld: true });
      server.setScript({ kind: "respond", status: 500 });
      const empty = await transport.send({ url: `http://receiver.test:${server.port}/hook`, headers: {}, body: "{}" });
      expect(empty).toMatchObject({ status: 500, body: "" });
      expect(empty.bodyWithheld).toBeUndefined();
    } finally {
      await transport.close();
    }
  });
});
