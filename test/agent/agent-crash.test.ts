import { afterEach, describe, expect, it, vi } from "vitest";
import { startLoopbackServer, type LoopbackServer, type ReceivedRequest, type Reply } from "../helpers/loopback-server.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { deliveriesTo, isVerification } from "../delivery/support.js";
import { spawnAgent } from "./processes.js";
import { agentApp, startPoolRun, type AgentApp } from "./support.js";

// Decision D34, an agent lost mid-attempt: killed (SIGKILL, a child process) or cut off from the
// host (a TCP proxy between them, closed). The host hears no report, and when the job's time is up
// closes it as an attempt of its own, "no report from agent NAME" (decision D45: the integration may
// have received it), and another agent, or the same one once it is back, delivers it: the result
// records both attempts.

let receiver: LoopbackServer | undefined;
let proxy: TcpProxy | undefined;
let a: AgentApp | undefined;
afterEach(async () => {
  await a?.close();
  await proxy?.close();
  await receiver?.close();
  a = undefined;
  proxy = undefined;
  receiver = undefined;
});

/** Verifications answer 200; the first run task request gets `first`, later ones 200 at once. */
const firstThen = (first: Reply) => (req: ReceivedRequest): Reply => {
  if (isVerification(req)) return { kind: "respond", status: 200 };
  return deliveriesTo(receiver!.requests).length <= 1 ? first : { kind: "respond", status: 200 };
};

const running = (resultId: string) =>
  vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 15_000, interval: 50 });
const attemptsOf = async (resultId: string) =>
  (await a!.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items.map((x) => [x.number, x.outcome, x.status, x.errorCode]);

describe("an agent lost mid-attempt", () => {
  it("killed (SIGKILL): its job is closed as 'no report' when its time is up and another agent delivers it, both attempts recorded", async () => {
    receiver = await startLoopbackServer(firstThen({ kind: "hang" }));
    a = await agentApp();
    const doomed = spawnAgent(["--url", a.origin, "--name", "doomed", "--allow", "127.0.0.1/32"], { RUNPLANE_AGENT_TOKEN: a.agentToken });
    await doomed.registered;
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    a.dispatcher({ agents: { timeoutMs: 3_000, marginMs: 500 } }).start();
    await vi.waitFor(() => expect(deliveriesTo(receiver!.requests)).toHaveLength(1), { timeout: 15_000, interval: 20 });
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBe("SIGKILL");

    const survivor = a.agent({ name: "survivor" });
    await survivor.agentId;
    await running(resultId);
    expect(deliveriesTo(receiver.requests)).toHaveLength(2);
    expect(await attemptsOf(resultId)).toStrictEqual([[2, "answered", 200, null], [1, "failed", null, "no-report"]]);
    const [, lost] = (await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items;
    expect(lost!.detail).toBe("no report from agent doomed: the integration may have received the request");
  });

  it("cut off (the connection to the host dropped): the same agent, back, delivers it, both attempts recorded", async () => {
    receiver = await startLoopbackServer(firstThen({ kind: "respond", status: 200, delayMs: 500 }));
    a = await agentApp();
    proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(a.origin).port) });
    const agent = a.agent({ url: `http://127.0.0.1:${proxy.port}` });
    await agent.agentId;
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    a.dispatcher({ agents: { timeoutMs: 1_000, marginMs: 500 } }).start();
    await vi.waitFor(() => expect(deliveriesTo(receiver!.requests)).toHaveLength(1), { timeout: 15_000, interval: 10 });
    await proxy.close({ reset: true });
    // The answer reaches the agent, its report does not reach the host: the row goes back, one attempt counted.
    await vi.waitFor(async () => expect((await a!.storage.taskDeliveries.listByResult(resultId))[0]).toMatchObject({ leaseOwner: null, attempt: 1 }), {
      timeout: 15_000,
      interval: 25,
    });
    expect((await a.storage.taskResults.get(resultId))?.status).toBe("pending");
    await proxy.open();
    await running(resultId);
    expect(deliveriesTo(receiver.requests)).toHaveLength(2);
    expect(await attemptsOf(resultId)).toStrictEqual([[2, "answered", 200, null], [1, "failed", null, "no-report"]]);
  });
});
