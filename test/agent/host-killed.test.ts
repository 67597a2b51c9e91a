import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createDispatcher, createEgress, createRunplane, generateKey, silentLogger, type Dispatcher } from "../../src/index.js";
import { toNodeListener } from "../../src/node.js";
import type { Storage } from "../../src/storage/types.js";
import { deliveriesTo, noRealDns, tasksAnswer } from "../delivery/support.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { agentApp, protocol, startPoolRun, type AgentApp } from "./support.js";

// Found from outside (decision D45's open end): a HOST killed while its agent held a job left no
// record: the row's lease ran out, another host claimed it and sent it again, the integration
// received it twice, and the attempts showed one. decision D58: the attempt is recorded when the
// host hands the job out, and the claim that re-takes the row closes it as "no report" before the
// next attempt. Two runplane hosts share one storage in this process; host A "dies" (every storage
// call it makes fails from then on) while its agent holds the job.

/** `storage` as a host sees it; after `kill()` every call this host makes fails, as if it were gone. */
function killable(storage: Storage): { storage: Storage; kill(): void } {
  let dead = false;
  const wrapped = new WeakMap<object, object>();
  const wrap = <T extends object>(target: T): T => {
    const known = wrapped.get(target);
    if (known) return known as T;
    const proxy = new Proxy(target, {
      get(t, key) {
        const value = Reflect.get(t, key, t) as unknown;
        if (typeof value === "function") return (...args: unknown[]) => (dead ? Promise.reject(new Error("host A is gone")) : (value as (...a: unknown[]) => unknown).apply(t, args));
        return value !== null && typeof value === "object" ? wrap(value) : value;
      },
    });
    wrapped.set(target, proxy);
    return proxy;
  };
  return { storage: wrap(storage), kill: () => void (dead = true) };
}

let receiver: LoopbackServer | undefined;
let b: AgentApp | undefined;
let hostA: { server: Server; dispatcher: Dispatcher; close(): Promise<void> } | undefined;
afterEach(async () => {
  await hostA?.close();
  await b?.close();
  await receiver?.close();
  hostA = b = receiver = undefined;
});

/** Host A over `storage`: served on 127.0.0.1, its dispatcher on a short lease (its jobs shortened to fit). */
async function startHostA(storage: Storage, key: string) {
  const transport = createEgress({ resolve: noRealDns, timeoutMs: 2_000 });
  const runplane = createRunplane({ storage, logger: silentLogger, publicUrl: "https://runplane.example", keyring: { keys: [{ id: "k1", key }] }, transport });
  const server = createServer(toNodeListener(runplane.handler));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const dispatcher = createDispatcher(runplane, { random: () => 0, pollIntervalMs: 100, leaseMs: 3_000, agents: { timeoutMs: 400, marginMs: 200 } });
  const close = async () => {
    await dispatcher.stop({ graceMs: 100 }).catch(() => undefined);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await runplane.close().catch(() => undefined);
    await transport.close();
  };
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, dispatcher, close };
}

/** Host B over a new shared storage (`deadline` its options'), a pool run, and host A's agent "doomed" holding its job; then A is killed. */
async function jobHeldWhenHostKilled(options: Parameters<typeof agentApp>[0] = {}) {
  receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
  const key = generateKey();
  const shared = createMemoryStorage();
  b = await agentApp({ ...options, storage: shared, keyring: { keys: [{ id: "k1", key }] } });
  // The task is saved while an agent is connected (its verification), then that agent leaves.
  const helper = b.agent();
  await helper.agentId;
  const { resultId, runId } = await startPoolRun(b, receiver.url("/hook"));
  await helper.stop();

  const a = killable(shared);
  const started = await startHostA(a.storage, key);
  hostA = started;
  const doomed = (await protocol({ origin: started.origin }, "register", { name: "doomed" }, b.agentToken)).json["agent-id"] as string;
  started.dispatcher.start();
  const taken = await protocol({ origin: started.origin }, "jobs/next", { "agent-id": doomed, "wait-ms": 5_000 }, b.agentToken);
  expect(taken.status).toBe(200);
  a.kill();
  return { b, resultId, runId, doomed };
}

describe("a host killed while its agent holds a job (decision D58)", () => {
  it("ends its result at the deadline saying the agent never reported, not that nothing was sent, when no host takes the row again", async () => {
    const { b, resultId } = await jobHeldWhenHostKilled({ deadline: { idle: "3s", max: "3s" } });
    b.dispatcher().start();
    await vi.waitFor(async () => expect((await b.storage.taskResults.get(resultId))?.status).toBe("unreachable"), { timeout: 15_000, interval: 50 });
    expect((await b.storage.taskResults.get(resultId))?.message).toBe(
      "Task request was not delivered before the deadline: no report from agent doomed: the integration may have received the request.",
    );
  });


  it("leaves the attempt recorded; the host that re-takes the row closes it as no report, then records its own: 2 attempts", async () => {
    const { b, resultId, doomed } = await jobHeldWhenHostKilled();
    // Host B, with an agent of the pool, takes the row once host A's lease has run out.
    const survivor = b.agent({ name: "survivor" });
    const survivorId = await survivor.agentId;
    b.dispatcher().start();
    await vi.waitFor(async () => expect((await b.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 15_000, interval: 50 });
    expect(deliveriesTo(receiver!.requests)).toHaveLength(1);
    const attempts = (await b.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items;
    expect(attempts.map((x) => [x.number, x.outcome, x.status, x.errorCode, x.agentId])).toStrictEqual([
      [2, "answered", 200, null, survivorId],
      [1, "failed", null, "no-report", doomed],
    ]);
    expect(attempts[1]!.detail).toBe("no report from agent doomed: the integration may have received the request");
  });
});
