import { afterEach, describe, expect, it } from "vitest";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { writerThreadOf } from "../../adapters/sqlite/writer-client.js";
import { createPendingWrites } from "../../adapters/sqlite/writer-pending.js";
import { claimSlot, createCallSlots } from "../../adapters/sqlite/writer-slots.js";
import type { Storage } from "../../src/storage/types.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import { organization, variable, WS } from "../../src/testing/conformance/fixtures.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

// decision D39: a write the writer thread's caller was answered 503 (writeTimeoutMs) is never run.
// Another connection holds the write lock past the bound; the thread waits in its BEGIN IMMEDIATE
// (busy_timeout); the calls time out; the lock goes; the thread must skip them, not commit them.

describe("the SQLite writer thread behind a lock held past writeTimeoutMs (D39)", () => {
  const files = useTempSqliteFile("runplane-writer-lock-");
  const opened: Storage[] = [];
  afterEach(async () => {
    for (const storage of opened.splice(0)) await storage.close();
  });
  const open = async (): Promise<Storage> => {
    const storage = createSqliteStorage(files.connect(), { writer: "thread", busyTimeoutMs: 60_000, writeTimeoutMs: 300 });
    opened.push(storage);
    await writerThreadOf(storage)!.ready;
    return storage;
  };

  it("skips every call answered 503: nothing of them is stored once the lock goes", async () => {
    const storage = await open();
    const other = files.connect();
    other.exec("BEGIN IMMEDIATE");
    const answers = await Promise.allSettled([
      storage.organizations.insert(organization("late")),
      storage.variables.insert(variable({ key: "late" })),
    ]);
    expect(answers.map((a) => a.status === "rejected" && a.reason instanceof StorageUnavailableError)).toStrictEqual([true, true]);
    other.exec("ROLLBACK");
    // The thread answers in order: once this write is answered, the earlier ones were run or skipped.
    await expect(storage.organizations.insert(organization("after"))).resolves.toBe(true);
    expect(await storage.organizations.get("late")).toBeNull();
    expect((await storage.variables.list(WS)).items).toStrictEqual([]);
    const check = files.connect();
    expect(check.prepare("SELECT count(*) AS n FROM variables").get()).toStrictEqual({ n: 0 });
    expect(check.prepare("SELECT name FROM organizations ORDER BY name").all()).toStrictEqual([{ name: "after" }]);
  });
});

describe("a call the writer thread already runs when its timeout comes (D39)", () => {
  it("is awaited, not answered 503: its answer is the thread's", async () => {
    const pending = createPendingWrites(40);
    const answer = new Promise((resolve, reject) => pending.add(1, resolve, reject, () => false));
    // The timer finds the slot RUNNING (cancel refused) and keeps waiting; the thread answers later.
    await new Promise((resolve) => setTimeout(resolve, 60));
    pending.settle(1, { ok: true, value: "committed" });
    await expect(answer).resolves.toBe("committed");
  });

  it("is answered 503 when its slot was still pending: cancelled, never run", async () => {
    const slots = createCallSlots(4);
    const slot = slots.take(1)!;
    const pending = createPendingWrites(20);
    const answer = new Promise((resolve, reject) => pending.add(1, resolve, reject, () => slots.cancel(slot)));
    await expect(answer).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(claimSlot(new Int32Array(slots.buffer), slot)).toBe(false);
  });
});
