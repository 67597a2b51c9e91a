import Database from "better-sqlite3";
import { buildSync } from "esbuild";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { groupWritesOutside } from "../../adapters/sqlite/driver.js";
import { createSqliteStorage, openSqliteStorage, type SqliteStorageOptions } from "../../adapters/sqlite/index.js";
import { writerThreadOf, type WriterThread } from "../../adapters/sqlite/writer-client.js";
import { createGroupCommit } from "../../adapters/sqlite/writer-group.js";
import { isWriteMethod, METHOD_ACCESS } from "../../adapters/sqlite/writer-methods.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { variablesScope } from "../../src/storage/revisions.js";
import type { Storage } from "../../src/storage/types.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import { organization, variable, WS } from "../../src/testing/conformance/fixtures.js";
import { rid, run, stage, started } from "../../src/testing/conformance/run-task-fixtures.js";
import { runStorageConformance } from "../../src/testing/vitest.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

/**
 * The writer's script bundled once for this file: started from TypeScript source, each of the
 * conformance suite's few hundred storages spent about 0.35 s loading tsx and the adapter in its
 * thread. Option `writerScript` is how a bundled service names the script; the tests below that
 * start from source (the default) keep that path covered. Inside node_modules so that the bundle
 * finds better-sqlite3.
 */
const WRITER_SCRIPT = fileURLToPath(new URL("../../node_modules/.cache/runplane-tests/sqlite-writer.mjs", import.meta.url));
buildSync({
  entryPoints: [fileURLToPath(new URL("../../adapters/sqlite/writer-thread.ts", import.meta.url))],
  outfile: WRITER_SCRIPT,
  bundle: true,
  platform: "node",
  format: "esm",
  packages: "external",
  logLevel: "error",
});

const threaded = (path: string) => createSqliteStorage(new Database(path), { writer: "thread", writerScript: WRITER_SCRIPT });

runStorageConformance("sqlite file, writer thread", async () => {
  // On tmpfs where there is one: the suite is about what the thread does, not the disk's fsync.
  const dir = await mkdtemp(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "runplane-sqlite-writer-"));
  const path = join(dir, "runplane.db");
  let storage = threaded(path);
  return {
    storage,
    async reopen() {
      await storage.close();
      storage = threaded(path);
      return storage;
    },
    async dispose() {
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe("sqlite adapter: writer thread", () => {
  const files = useTempSqliteFile("runplane-sqlite-writer-");
  const opened: Storage[] = [];
  afterEach(async () => {
    for (const storage of opened.splice(0)) await storage.close();
    vi.restoreAllMocks();
  });
  const open = async (options: SqliteStorageOptions = {}): Promise<{ storage: Storage; thread: WriterThread }> => {
    const storage = createSqliteStorage(files.connect(), { writer: "thread", ...options });
    opened.push(storage);
    const thread = writerThreadOf(storage)!;
    await thread.ready;
    return { storage, thread };
  };

  describe("which methods write", () => {
    it("lists every method of every store of the SQLite storage, and nothing else", () => {
      const storage = createSqliteStorage(new Database(":memory:")) as unknown as Record<string, unknown>;
      const methods = (store: object) => Object.keys(store).sort();
      const actual = Object.fromEntries(Object.entries(storage).flatMap(([name, store]) => (typeof store === "object" && store ? [[name, methods(store)]] : [])));
      const listed = Object.fromEntries(Object.entries(METHOD_ACCESS).map(([name, store]) => [name, methods(store)]));
      expect(listed).toStrictEqual(actual);
    });

    it("routes reads to this thread's connection and only writes to the thread", async () => {
      const { storage } = await open();
      const local = storage.organizations as unknown as Record<string, unknown>;
      expect(Object.keys(local).sort()).toStrictEqual(["delete", "get", "insert", "names", "replace"]);
      expect(isWriteMethod("organizations", "get")).toBe(false);
      expect(isWriteMethod("organizations", "names")).toBe(false);
      expect(isWriteMethod("organizations", "insert")).toBe(true);
      expect(isWriteMethod("organizations", "constructor")).toBe(false);
      expect(isWriteMethod("close", "call")).toBe(false);
    });

    it("keeps the main thread's connection read-only", async () => {
      const db = files.connect();
      opened.push(createSqliteStorage(db, { writer: "thread" }));
      expect(db.pragma("query_only", { simple: true })).toBe(1);
      expect(() => db.exec("INSERT INTO organizations (name) VALUES ('x')")).toThrow(/readonly/);
    });

    it("refuses an in-memory database, which a second connection cannot see", () => {
      expect(() => createSqliteStorage(new Database(":memory:"), { writer: "thread" })).toThrow(TypeError);
      expect(() => createSqliteStorage(new Database(":memory:"), { writer: "other" as "thread" })).toThrow(TypeError);
    });
  });

  describe("group commit", () => {
    it("commits writes that arrive together in fewer transactions than writes, each durable when it resolves", async () => {
      const { storage, thread } = await open();
      const before = thread.groups;
      const writes = Array.from({ length: 50 }, (_, i) => storage.variables.insert(variable({ id: `var-${i}`, key: `k${i}` })));
      expect(await Promise.all(writes)).toStrictEqual(Array.from({ length: 50 }, () => ({ ok: true })));
      expect(thread.groups - before).toBeLessThan(50);
      const other = files.connect();
      expect(other.prepare("SELECT COUNT(*) AS n FROM variables").get()).toStrictEqual({ n: 50 });
    });

    it("runs each call in its own savepoint: a failing primitive fails alone, the adapter's own transactions nest", async () => {
      const db = files.connect();
      const local = createSqliteStorage(db);
      opened.push(local);
      groupWritesOutside(db);
      const commit = createGroupCommit(db);
      const a = variable({ id: "var-a", key: "a" });
      await local.runs.create(run({ id: rid("run", 1) }), [stage({ id: rid("ts", 1), runId: rid("run", 1) })], []);
      const calls = [
        () => local.variables.insert(a),
        () => local.variables.insert({ ...a, key: "clash" }), // the same id: a programming error, it throws
        () => local.variables.insert({ ...a, id: "var-b" }), // the same key: the guard answers duplicate-key
        () => local.taskStages.start(started(stage({ id: rid("ts", 1), runId: rid("run", 1) })), { statuses: ["running"], version: 1 }, [], []),
        () => local.variables.insert(variable({ id: "var-c", key: "c" })),
      ];
      const outcomes = await commit(calls.map((run, id) => ({ id, run })));
      expect(outcomes.map((o) => (o.ok ? o.value : o.error.code))).toStrictEqual([
        { ok: true },
        "SQLITE_CONSTRAINT_PRIMARYKEY",
        { ok: false, reason: "duplicate-key" },
        null,
        { ok: true },
      ]);
      expect(db.inTransaction).toBe(false);
      expect((await local.variables.list(WS)).items.map((v) => v.id)).toStrictEqual(["var-a", "var-c"]);
    });

    it("fails every call of a group whose transaction SQLite abandoned, committing none", async () => {
      const db = files.connect();
      opened.push(createSqliteStorage(db));
      const commit = createGroupCommit(db);
      const insert = db.prepare("INSERT INTO organizations (name, email) VALUES (?, NULL)");
      const outcomes = await commit([
        { id: 1, run: async () => insert.run("one") },
        { id: 2, run: async () => db.exec("ROLLBACK") },
        { id: 3, run: async () => insert.run("three") },
      ]);
      expect(outcomes.map((o) => o.ok)).toStrictEqual([false, false, false]);
      expect(db.prepare("SELECT COUNT(*) AS n FROM organizations").get()).toStrictEqual({ n: 0 });
    });

    it("answers each caller of a group with its own result or its own error, of the in-thread class", async () => {
      const { storage } = await open();
      const a = variable({ id: "var-a", key: "a" });
      const [first, clash, duplicate, settle] = await Promise.allSettled([
        storage.variables.insert(a),
        storage.variables.insert({ ...a, key: "clash" }),
        storage.variables.insert({ ...a, id: "var-b" }),
        storage.taskDeliveries.settle([
          { type: "release", id: "d-1", fencingToken: 1 },
          { type: "release", id: "d-1", fencingToken: 1 },
        ]),
      ]);
      expect(first).toStrictEqual({ status: "fulfilled", value: { ok: true } });
      expect(duplicate).toStrictEqual({ status: "fulfilled", value: { ok: false, reason: "duplicate-key" } });
      const inThread = createSqliteStorage(new Database(":memory:"));
      await inThread.variables.insert(a);
      const expected = (await inThread.variables.insert({ ...a, key: "clash" }).catch((e: unknown) => e)) as Error & { code: string };
      const got = (clash as PromiseRejectedResult).reason as Error & { code: string };
      expect([got.name, got.code, got.message]).toStrictEqual([expected.name, expected.code, expected.message]);
      expect((settle as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    });

    it("answers a lock held past busy_timeout with StorageUnavailableError (503, D28)", async () => {
      const { storage } = await open({ busyTimeoutMs: 0 });
      const holder = files.connect();
      holder.exec("BEGIN IMMEDIATE");
      const error = await storage.organizations.insert(organization("acme")).catch((e: unknown) => e);
      holder.exec("ROLLBACK");
      expect(error).toBeInstanceOf(StorageUnavailableError);
      expect(error).toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
      expect(await storage.organizations.insert(organization("acme"))).toBe(true);
    });
  });

  it("lets a read right after an acknowledged write see it", async () => {
    const { storage } = await open();
    for (let i = 0; i < 30; i++) {
      expect(await storage.organizations.insert(organization(`org-${i}`))).toBe(true);
      expect(await storage.organizations.get(`org-${i}`)).toStrictEqual(organization(`org-${i}`));
      const v = variable({ id: `var-${i}`, key: `k${i}` });
      await storage.variables.insert(v);
      expect((await storage.variables.list(WS)).total).toBe(i + 1);
      expect(await storage.revisions!.read([variablesScope(WS)])).toStrictEqual([i + 1]);
    }
  });

  describe("a writer thread that stops", () => {
    it("rejects pending and later writes with StorageUnavailableError, says so once in the log, and keeps reads", async () => {
      const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
      const { storage, thread } = await open();
      await storage.organizations.insert(organization("kept"));
      const before = storage.organizations.insert(organization("racing"));
      void thread.worker.terminate();
      const pending = storage.organizations.insert(organization("pending"));
      await expect(pending).rejects.toBeInstanceOf(StorageUnavailableError);
      await before.then(
        (value) => expect(value).toBe(true),
        (error: unknown) => expect(error).toBeInstanceOf(StorageUnavailableError),
      );
      await expect(storage.organizations.insert(organization("later"))).rejects.toBeInstanceOf(StorageUnavailableError);
      expect(log).toHaveBeenCalledTimes(1);
      expect(String(log.mock.calls[0]![0])).toMatch(/writer thread exited.*503/);
      expect(await storage.organizations.get("kept")).toStrictEqual(organization("kept"));
    });

    it("turns health() degraded at once, naming the stopped thread, while reads still answer", async () => {
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      const { storage, thread } = await open();
      // No heartbeat during the test: only the storage's own knowledge can tell health.
      const runplane = createRunplane({ storage, keyring: { keys: [{ id: "k", key: generateKey() }] }, logger: silentLogger, host: { intervalMs: 3_600_000 } });
      try {
        await vi.waitFor(async () => expect((await runplane.health()).status).toBe("ok"));
        await thread.worker.terminate();
        const health = await runplane.health();
        expect(health).toMatchObject({ status: "degraded", storage: "unreachable" });
        expect(health.reasons).toStrictEqual(["storage refuses writes: writer thread stopped"]);
      } finally {
        await runplane.close();
      }
    });

    it("treats a crash of the thread the same way", async () => {
      const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
      const { storage, thread } = await open();
      thread.worker.postMessage(null); // not a message it knows: its handler throws, uncaught
      await expect(storage.organizations.insert(organization("after"))).rejects.toBeInstanceOf(StorageUnavailableError);
      expect(String(log.mock.calls[0]![0])).toMatch(/writer thread failed \(TypeError\)/);
    });
  });

  // Found from outside: with the file system frozen, writes waited without limit, /healthz said ok
  // and SIGTERM could not stop the process. A lock held by another connection blocks the thread the
  // same way (its BEGIN IMMEDIATE waits busy_timeout inside SQLite).
  describe("a writer thread that gets no commit done", () => {
    it("fails a write after writeTimeoutMs with StorageUnavailableError, turns health degraded, and recovers", async () => {
      const { storage } = await open({ busyTimeoutMs: 60_000, writeTimeoutMs: 300 });
      const other = files.connect();
      other.exec("BEGIN IMMEDIATE");
      const started = Date.now();
      const error = await storage.organizations.insert(organization("stuck")).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageUnavailableError);
      expect((error as StorageUnavailableError).reason).toBe("no commit within 300 ms");
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(storage.writesUnavailable?.()).toBe("no commit within 300 ms");
      other.exec("ROLLBACK");
      // The timed-out write is never run (decision D39, test/adapters/sqlite-writer-lock.test.ts);
      // the next write's answer clears the condition.
      await expect(storage.organizations.insert(organization("after"))).resolves.toBe(true);
      expect(storage.writesUnavailable?.()).toBeNull();
    });

    it("says so in health while writes have waited longer than the stall bound, before any times out", async () => {
      const { storage } = await open({ busyTimeoutMs: 60_000, writeTimeoutMs: 60_000 });
      const other = files.connect();
      other.exec("BEGIN IMMEDIATE");
      const pending = storage.organizations.insert(organization("waiting"));
      expect(storage.writesUnavailable?.()).toBeNull();
      await vi.waitFor(() => expect(storage.writesUnavailable?.()).toMatch(/^writes waiting for a commit for more than 2 s$/), { timeout: 5_000 });
      other.exec("ROLLBACK");
      await expect(pending).resolves.toBe(true);
      expect(storage.writesUnavailable?.()).toBeNull();
    });

    it("remembers a disk failure reported by the thread until a write succeeds", async () => {
      const { storage } = await open({ busyTimeoutMs: 10 });
      const other = files.connect();
      other.exec("BEGIN IMMEDIATE");
      await expect(storage.organizations.insert(organization("busy"))).rejects.toBeInstanceOf(StorageUnavailableError);
      expect(storage.writesUnavailable?.()).toBe("database busy");
      other.exec("ROLLBACK");
      await expect(storage.organizations.insert(organization("free"))).resolves.toBe(true);
      expect(storage.writesUnavailable?.()).toBeNull();
    });

    it("lets close() finish within writeTimeoutMs even while the thread is blocked", async () => {
      const { storage } = await open({ busyTimeoutMs: 60_000, writeTimeoutMs: 300 });
      const other = files.connect();
      other.exec("BEGIN IMMEDIATE");
      const pending = storage.organizations.insert(organization("stuck")).catch((e: unknown) => e);
      const started = Date.now();
      await storage.close();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await pending).toBeInstanceOf(StorageUnavailableError);
      other.exec("ROLLBACK");
    });
  });

  describe("close()", () => {
    it("commits the writes asked for before it, stops the thread cleanly, and refuses later calls", async () => {
      const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
      const storage = createSqliteStorage(files.connect(), { writer: "thread" });
      const thread = writerThreadOf(storage)!;
      const exit = new Promise<number>((resolve) => thread.worker.once("exit", resolve));
      const writes = [1, 2, 3].map((n) => storage.organizations.insert(organization(`org-${n}`)));
      await storage.close();
      expect(await Promise.all(writes)).toStrictEqual([true, true, true]);
      expect(await exit).toBe(0);
      await expect(storage.organizations.insert(organization("late"))).rejects.toThrow(/closed/);
      await storage.close();
      expect(log).not.toHaveBeenCalled();
      const again = await openSqliteStorage(files.path, { writer: "thread" });
      opened.push(again);
      expect(await again.organizations.get("org-3")).toStrictEqual(organization("org-3"));
    });
  });
});
