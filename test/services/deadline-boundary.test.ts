import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { callbackBody, deliverDue, runTaskApp, sendCallback, startedRun, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

// decision D16/D17 at the boundary: the callback token works until the instant of the deadline,
// not at it; the sweep settles a result at that instant, not a millisecond before.

let dispose = (): void => undefined;
afterEach(() => dispose());

async function atDeadline() {
  let now = Date.UTC(2026, 0, 1);
  const clock = () => new Date(now);
  const a: RunTaskApp = await runTaskApp({ name: "memory", create: () => ({ storage: createMemoryStorage(), dispose() {} }) }, (d) => (dispose = d), { clock });
  const { resultIds } = await startedRun(a, ["mandatory"]);
  const id = resultIds[0]!;
  await deliverDue(a);
  const deadline = Date.parse((await a.storage.taskResults.get(id))!.deadlineAt!);
  return { a, id, token: await tokenOf(a, id), deadline, set: (ms: number) => (now = ms) };
}

describe("deadline boundary", () => {
  it("accepts a callback one millisecond before the deadline and refuses one at it (401)", async () => {
    const before = await atDeadline();
    before.set(before.deadline - 1);
    expect((await sendCallback(before.a, before.id, before.token, callbackBody("passed"))).status).toBe(200);

    const at = await atDeadline();
    at.set(at.deadline);
    expect((await sendCallback(at.a, at.id, at.token, callbackBody("passed"))).status).toBe(401);
  });

  it("sweeps a result at its deadline, not a millisecond before", async () => {
    const s = await atDeadline();
    s.set(s.deadline - 1);
    expect((await deliverDue(s.a)).expired).toBe(0);
    expect((await s.a.storage.taskResults.get(s.id))!.status).toBe("running");
    s.set(s.deadline);
    expect((await deliverDue(s.a)).expired).toBe(1);
    expect((await s.a.storage.taskResults.get(s.id))!.status).toBe("errored");
  });
});
