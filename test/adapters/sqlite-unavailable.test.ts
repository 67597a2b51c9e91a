import { describe, expect, it } from "vitest";
import { deferredTx, groupedTx, immediateTx, sqliteUnavailable } from "../../adapters/sqlite/driver.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { isStorageUnavailableError, StorageUnavailableError } from "../../src/storage/unavailable.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

// Decision D28: a SQLite write that waited its whole busy_timeout for another connection's lock
// is "unavailable" (503, retry), not an internal error; the write it carried left nothing behind.

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("the SQLite adapter says when the database is locked past its busy timeout (D28)", () => {
  const file = useTempSqliteFile("runplane-d28-");

  it("rejects a write with StorageUnavailableError while another connection holds the write lock, and writes nothing", async () => {
    const storage = createSqliteStorage(file.connect(), { busyTimeoutMs: 20 });
    expect(await storage.organizations.insert({ name: "acme", email: null })).toBe(true);
    const other = file.connect();
    other.exec("BEGIN IMMEDIATE");
    const error = await rejection(storage.organizations.insert({ name: "other", email: null }));
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).reason).toBe("database busy");
    expect((error as StorageUnavailableError).code).toBe("SQLITE_BUSY");
    // Reads go on under WAL while the lock is held.
    expect(await storage.organizations.get("acme")).toEqual({ name: "acme", email: null });
    other.exec("ROLLBACK");
    expect(await storage.organizations.get("other")).toBeNull();
    expect(await storage.organizations.insert({ name: "other", email: null })).toBe(true);
    await storage.close();
  });

  it("classifies in every transaction helper: immediate, deferred and grouped", async () => {
    const db = file.connect();
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 20");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    const insert = db.prepare("INSERT INTO t (id) VALUES (?)");
    const immediate = immediateTx(db, (id: number) => insert.run(id));
    const grouped = groupedTx(db, (id: number) => insert.run(id));
    // A deferred transaction that writes takes the lock at its first write.
    const deferred = deferredTx(db, (id: number) => insert.run(id));
    const other = file.connect();
    other.exec("BEGIN IMMEDIATE");
    expect(isStorageUnavailableError(await rejection(Promise.resolve().then(() => immediate(1))))).toBe(true);
    expect(isStorageUnavailableError(await rejection(Promise.resolve().then(() => deferred(2))))).toBe(true);
    expect(isStorageUnavailableError(await rejection(grouped(3)))).toBe(true);
    other.exec("COMMIT");
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 });
  });

  it("leaves every other failure as it was", () => {
    const db = file.connect();
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    db.exec("INSERT INTO t VALUES (1)");
    let constraint: unknown;
    try {
      db.exec("INSERT INTO t VALUES (1)");
    } catch (error) {
      constraint = error;
    }
    expect(sqliteUnavailable(constraint)).toBeNull();
    expect(sqliteUnavailable(new TypeError("The database connection is not open"))).toBeNull();
  });

  // Found from outside: a full disk or an I/O error answered 500 and logged only "SqliteError".
  it.each([
    ["SQLITE_FULL", "disk full"],
    ["SQLITE_IOERR_WRITE", "disk I/O error"],
    ["SQLITE_IOERR", "disk I/O error"],
    ["SQLITE_READONLY_DBMOVED", "database is read-only"],
    ["SQLITE_CANTOPEN", "database file cannot be opened"],
  ])("classifies %s as unavailable (%s): the disk, not the request, is at fault", (code, reason) => {
    const error = sqliteUnavailable(Object.assign(new Error("x"), { code }));
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect(error?.reason).toBe(reason);
  });

  it("rejects a write on a full database with StorageUnavailableError (503), keeps reads, and takes writes again once there is room", async () => {
    const db = file.connect();
    const storage = createSqliteStorage(db);
    expect(await storage.organizations.insert({ name: "acme", email: null })).toBe(true);
    const pages = (db.pragma("page_count", { simple: true }) as number);
    db.pragma(`max_page_count = ${pages}`);
    const big = "x".repeat(64 * 1024);
    const error = await rejection(storage.organizations.insert({ name: "big", email: big }));
    expect(isStorageUnavailableError(error)).toBe(true);
    expect((error as StorageUnavailableError).reason).toBe("disk full");
    expect(await storage.organizations.get("acme")).toEqual({ name: "acme", email: null });
    db.pragma(`max_page_count = ${pages * 100}`);
    expect(await storage.organizations.insert({ name: "big", email: big })).toBe(true);
    await storage.close();
  });
});
