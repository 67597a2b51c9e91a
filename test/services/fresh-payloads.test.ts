import { afterEach, describe, expect, it, vi } from "vitest";
import { createDispatcher, createRunplane, silentLogger, type HttpRequest, type HttpTransport } from "../../src/index.js";
import { createFreshPayloads } from "../../src/services/fresh-payloads.js";
import { deliveryPayloadBinding } from "../../src/services/task-deliveries.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { deliveryApp, rowOf, startRun, tasksAnswer, type DeliveryApp } from "../delivery/support.js";

// The process that starts a stage sends its first attempts from the texts it built,
// not by opening the sealed payload again; every other attempt opens the stored value.

describe("fresh payloads", () => {
  const held = (options: { maxChars?: number; maxAgeMs?: number; now?: () => number } = {}) => {
    const fresh = createFreshPayloads({ now: () => 0, ...options });
    return { fresh, release: fresh.hold() };
  };

  it("gives each text once and pushes the oldest out past its bound", () => {
    const { fresh } = held({ maxChars: 10 });
    fresh.keep([{ id: "a", text: "1234" }, { id: "b", text: "5678" }]);
    expect(fresh.take("a")).toBe("1234");
    expect(fresh.take("a")).toBeUndefined();
    fresh.keep([{ id: "c", text: "abcd" }, { id: "d", text: "efgh" }, { id: "huge", text: "x".repeat(11) }]);
    expect([fresh.take("b"), fresh.take("c"), fresh.take("d"), fresh.take("huge")]).toStrictEqual([undefined, "abcd", "efgh", undefined]);
    expect(fresh.size()).toBe(0);
  });

  it("still pushes out the oldest held text after many taken ones", () => {
    const { fresh } = held({ maxChars: 8 });
    for (let i = 0; i < 5000; i++) fresh.keep([{ id: `t${i}`, text: "x" }]), fresh.take(`t${i}`);
    fresh.keep([{ id: "a", text: "1234" }, { id: "b", text: "5678" }, { id: "c", text: "9" }]);
    expect([fresh.take("a"), fresh.take("b"), fresh.take("c")]).toStrictEqual([undefined, "5678", "9"]);
  });

  it("keeps nothing without a holder, forgets all at the last release, and nothing past maxAgeMs", () => {
    let t = 0;
    const fresh = createFreshPayloads({ maxAgeMs: 100, now: () => t });
    fresh.keep([{ id: "a", text: "1" }]);
    expect(fresh.size()).toBe(0);
    const first = fresh.hold();
    const second = fresh.hold();
    fresh.keep([{ id: "a", text: "1" }, { id: "b", text: "2" }]);
    first();
    first();
    expect(fresh.size()).toBe(2);
    t = 100;
    expect(fresh.take("a")).toBeUndefined();
    fresh.keep([{ id: "c", text: "3" }]);
    second();
    expect([fresh.size(), fresh.take("c")]).toStrictEqual([0, undefined]);
  });
});

let receiver: LoopbackServer;
const apps: DeliveryApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  await receiver?.close();
});

function recording(statuses: number[]) {
  const sent: string[] = [];
  const transport: HttpTransport = {
    send: async (req: HttpRequest) => {
      sent.push(new TextDecoder().decode(req.body as Uint8Array));
      return { status: statuses.shift() ?? 200, headers: {}, body: "", bodyTruncated: false };
    },
    close: async () => {},
  };
  return { transport, sent };
}

describe("a stage's first attempts", () => {
  it("send the starting process's texts unopened; a retry and another process open the stored value", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    const a = await deliveryApp();
    apps.push(a);
    // The dispatcher exists before the stage starts: its instance keeps the texts it enqueues.
    const first = recording([500, 200]);
    const dispatcher = a.dispatcher({ transport: first.transport });
    const { resultIds } = await startRun(a, [receiver.url("/0"), receiver.url("/1")]);
    const payloadOpens = (): number => open.mock.calls.filter(([, binding]) => String(binding).startsWith("task_deliveries|payload|")).length;
    const open = vi.spyOn(a.keyring, "open");
    await dispatcher.tick();
    expect(first.sent).toHaveLength(2);
    expect(payloadOpens()).toBe(0);
    // Exactly the sealed bytes (D14): what was sent is what storage holds.
    const stored = await Promise.all(resultIds.map(async (id) => { const row = await rowOf(a, id); return a.keyring.open(row.payload, deliveryPayloadBinding(row.id)); }));
    expect([...first.sent].sort()).toStrictEqual([...stored].sort());
    open.mockClear();
    a.clock.advance(60_000);
    const retry = recording([200]);
    await a.dispatcher({ transport: retry.transport }).tick();
    expect(retry.sent).toHaveLength(1);
    expect(payloadOpens()).toBe(1);

    // A second process on the same storage and keyring (the workspace now has 3 tasks): it opens each.
    const { resultIds: later } = await startRun(a, [receiver.url("/2")]);
    const b = createRunplane({ storage: a.storage, keyring: a.keyring, clock: a.clock, logger: silentLogger });
    open.mockClear();
    const other = recording([200]);
    await createDispatcher(b, { transport: other.transport }).tick();
    expect(other.sent.map((t) => JSON.parse(t).task_result_id).sort()).toStrictEqual([...later].sort());
    expect(payloadOpens()).toBe(later.length);
  });
});
