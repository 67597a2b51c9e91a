import { DEFAULT_GLOBAL_CONFIGURATION } from "../../src/schemas/run-task-records.js";
import { buildConnector } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEgress, type EgressConnector, type ResolvedAddress } from "../../src/delivery/egress.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { attachTask, taskBody } from "../helpers/run-tasks.js";
import { CONTROLS, REFUSED_LITERALS, REFUSED_NAMES, REFUSED_RESOLUTIONS, REFUSED_SCHEMES, ZONE_ID_HOST } from "./ssrf-vectors.js";
import { deliveriesTo, deliveryApp, rowOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// design/ssrf-vectors.md through the whole product (decision D15): every vector, as a run task
// URL, is refused when saved (422) and when sent, and no connection is made. The transport is the
// real egress; its connector records the address it is asked to dial and dials the loopback
// receiver instead, so even a broken guard could reach nothing but 127.0.0.1.

const LITERALS = [...REFUSED_LITERALS, ZONE_ID_HOST];
const OTHER_URLS = [...REFUSED_SCHEMES, "http://a:b@public.example/"];

let receiver: LoopbackServer;
let a: DeliveryApp;
let dialled: string[];
let asked: string[];

/** Answers from a table; `rebind.example` answers 1.1.1.1 first and 127.0.0.1 after. */
async function resolve(name: string): Promise<ResolvedAddress[]> {
  asked.push(name);
  const host = name.toLowerCase().replace(/\.$/, "");
  const answers = host === "rebind.example" ? [asked.filter((n) => n === name).length === 1 ? "1.1.1.1" : "127.0.0.1"] : host === "public.example" ? ["1.1.1.1"] : REFUSED_RESOLUTIONS[host];
  if (!answers) throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
  return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
}

beforeEach(async () => {
  receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
  dialled = [];
  asked = [];
  const dial = buildConnector({ timeout: 1_000 });
  const connector: EgressConnector = (opts, callback) => {
    dialled.push(opts.hostname);
    dial({ ...opts, protocol: "http:", hostname: "127.0.0.1", port: String(receiver.port) }, callback);
  };
  // The default policy: no allowlist at all.
  a = await deliveryApp({ egress: { resolve }, transport: createEgress({ connector, resolve, timeoutMs: 1_000 }) });
});
afterEach(async () => {
  await a.close();
  await receiver.close();
});

const urlsOf = (host: string): string[] => [`http://${host}:${receiver.port}/hook`, `https://${host}:${receiver.port}/hook`];
const VECTOR_URLS = (): string[] => [...[...LITERALS, ...REFUSED_NAMES, ...Object.keys(REFUSED_RESOLUTIONS)].flatMap(urlsOf), ...OTHER_URLS];

/** Stores a run task without the save-time check, as if saved before the policy tightened. */
async function insertTask(url: string, n: number): Promise<string> {
  const id = `task-ssrf${String(n).padStart(12, "0")}`;
  const at = a.clock().toISOString();
  const ok = await a.storage.runTasks.insert({ id, organization: "acme", name: `raw-${n}`, url, description: null, category: "task", enabled: true, hmacKey: null, globalConfiguration: DEFAULT_GLOBAL_CONFIGURATION, version: 1, createdAt: at, updatedAt: at });
  expect(ok.ok).toBe(true);
  await attachTask(a, id, "mandatory");
  return id;
}

describe("SSRF: refused when saved", () => {
  it("answers 422 to every vector as a run task URL and makes no connection", async () => {
    for (const url of VECTOR_URLS()) {
      const res = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "probe", url }) });
      expect(res.status, url).toBe(422);
      expect(res.json.errors[0].source.pointer, url).toBe("/data/attributes/url");
      expect(res.json.errors[0].detail, url).toMatch(/not allowed|absolute http or https URL/);
    }
    expect(dialled).toStrictEqual([]);
    expect(receiver.connections).toBe(0);
    // Names the policy refuses outright are never even resolved.
    expect(asked.filter((n) => REFUSED_NAMES.includes(n))).toStrictEqual([]);
    expect((await a.runplane.runTasks.tasks.list("acme")).total).toBe(0);
  });

  it("names the reason", async () => {
    const detail = async (url: string) =>
      (await a.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "probe", url }) })).json.errors[0].detail;
    // Found from outside: the reason was an internal name (linkLocal) and said nothing of the way out.
    const way = "; an integration inside a private network is reached through an agent pool (the task's agent-pool), a single address through an egress allowlist entry";
    expect(await detail("http://127.0.0.1/")).toBe(`The run task URL is not allowed: the destination address is not public (loopback)${way}`);
    expect(await detail(`http://metadata.example:${receiver.port}/`)).toBe(`The run task URL is not allowed: the destination address is not public (link-local)${way}`);
    expect(await detail("http://intranet/")).toBe("The run task URL is not allowed: single-label host names are not allowed; use a fully qualified name");
    expect(await detail("http://a:b@public.example/")).toBe("The run task URL is not allowed: a URL must not carry a user name or password");
  });

  it("refuses the same vectors on a URL change, keeping the saved URL", async () => {
    const { taskIds } = await startRun(a, [`http://public.example:${receiver.port}/hook`]);
    for (const url of [`http://[::1]:${receiver.port}/`, `http://loopback.example:${receiver.port}/`]) {
      const res = await a.call("PATCH", `/api/v2/tasks/${taskIds[0]}`, { body: taskBody({ url }) });
      expect(res.status).toBe(422);
    }
    expect((await a.runplane.runTasks.tasks.get(taskIds[0]!)).url).toBe(`http://public.example:${receiver.port}/hook`);
  });

  it.each(CONTROLS)("saves the public control %s (dialled only through the diverting connector)", async (host) => {
    const res = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "control", url: `http://${host}:${receiver.port}/hook` }) });
    expect(res.status).toBe(201);
    expect(dialled).toStrictEqual([new URL(`http://${host}/`).hostname.replace(/^\[|\]$/g, "")]);
  });
});

describe("SSRF: refused when sent", () => {
  it("sends none of the vectors and records why, with no connection made", async () => {
    const urls = VECTOR_URLS();
    for (const [n, url] of urls.entries()) await insertTask(url, n);
    const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
    await a.runplane.runTasks.startStage(run.id, stages[0]!.stage);
    const results = await a.runplane.runTasks.listResults(stages[0]!.id);
    expect(results).toHaveLength(urls.length);

    const report = await a.dispatcher({ concurrency: 16 }).tick();
    expect(report).toMatchObject({ attempted: urls.length, delivered: 0, failed: urls.length });
    for (const result of results) {
      const row = await rowOf(a, result.id);
      expect(row.lastError, row.url).toMatch(/^(the destination address is not public|it is not a valid URL|only http and https|localhost names|single-label|a URL must not carry)/);
    }
    expect(dialled).toStrictEqual([]);
    expect(receiver.connections).toBe(0);
  });

  it("delivers the public controls through the guard", async () => {
    const { resultIds } = await startRun(a, CONTROLS.map((host) => `http://${host}:${receiver.port}/hook`));
    dialled.length = 0;
    expect((await a.dispatcher().tick()).delivered).toBe(CONTROLS.length);
    expect(dialled.sort()).toStrictEqual(CONTROLS.map((host) => new URL(`http://${host}/`).hostname.replace(/^\[|\]$/g, "")).sort());
    expect(deliveriesTo(receiver.requests).map((r) => JSON.parse(r.body.toString()).task_result_id).sort()).toStrictEqual([...resultIds].sort());
  });

  it("connects a rebinding name only while it resolves public: the rebound answer is refused unsent", async () => {
    const { resultIds } = await startRun(a, [`http://rebind.example:${receiver.port}/hook`]);
    expect(dialled).toStrictEqual(["1.1.1.1"]); // the verification request, when it was saved
    const connections = receiver.connections;
    await a.dispatcher().tick();
    expect((await rowOf(a, resultIds[0]!)).lastError).toBe("the destination address is not public (loopback)");
    expect(dialled).toStrictEqual(["1.1.1.1"]);
    expect(receiver.connections).toBe(connections);
  });
});

describe("SSRF: the allowlist", () => {
  it("lets 127.0.0.1/32 through to the receiver and still refuses 127.0.0.2, when saved and when sent", async () => {
    const allowed = await deliveryApp(); // allows 127.0.0.1/32, real loopback transport
    try {
      const { resultIds } = await startRun(allowed, [receiver.url("/hook")]);
      expect((await allowed.dispatcher().tick()).delivered).toBe(1);
      expect(deliveriesTo(receiver.requests)).toHaveLength(1);

      const before = receiver.connections;
      const res = await allowed.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "other", url: `http://127.0.0.2:${receiver.port}/` }) });
      expect(res.status).toBe(422);
      expect(res.json.errors[0].detail).toMatch(/^The run task URL is not allowed: the destination address is not public \(loopback\); an integration inside a private network/);

      const at = allowed.clock().toISOString();
      await allowed.storage.runTasks.insert({ id: "task-raw0000000000002", organization: "acme", name: "raw", url: `http://127.0.0.2:${receiver.port}/`, description: null, category: "task", enabled: true, hmacKey: null, globalConfiguration: DEFAULT_GLOBAL_CONFIGURATION, version: 1, createdAt: at, updatedAt: at });
      await attachTask(allowed, "task-raw0000000000002", "mandatory", ["pre_plan"]);
      const { run, stages } = await allowed.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
      await allowed.runplane.runTasks.startStage(run.id, "pre_plan");
      const [result] = await allowed.runplane.runTasks.listResults(stages.find((s) => s.stage === "pre_plan")!.id);
      await allowed.dispatcher().tick();
      expect((await rowOf(allowed, result!.id)).lastError).toBe("the destination address is not public (loopback)");
      expect(receiver.connections).toBe(before);
      expect(resultIds).toHaveLength(1);
    } finally {
      await allowed.close();
    }
  });
});
