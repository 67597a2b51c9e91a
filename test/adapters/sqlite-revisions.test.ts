import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { SqliteDatabase, SqliteStatement } from "../../adapters/sqlite/driver.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { DIRECTORY_SCOPE } from "../../src/storage/revisions.js";
import type { Storage } from "../../src/storage/types.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runs `sql` against the file from a separate node process with its own better-sqlite3 connection. */
function inAnotherProcess(path: string, sql: string): void {
  const script = "const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.pragma('busy_timeout = 5000'); db.exec(process.argv[2]); db.close();";
  execFileSync(process.execPath, ["-e", script, path, sql], { cwd: ROOT, stdio: "pipe" });
}

const directory = async (storage: Storage): Promise<number> => (await storage.revisions!.read([DIRECTORY_SCOPE]))[0]!;
const insertOrganization = (name: string): string => `INSERT INTO organizations (name, email) VALUES ('${name}', NULL)`;

/**
 * decision D60: the SQLite revision store reads its counters again only when the connection's change
 * signal moved. Every commit it could miss is made here somewhere else than through the storage, and
 * the very next read must show it.
 */
describe("sqlite revisions: a commit made anywhere moves the next read", () => {
  const file = useTempSqliteFile("rp-revisions-");

  it("sees each commit of another connection to the file, read after read", async () => {
    const storage = createSqliteStorage(file.connect());
    const other = file.connect();
    let last = await directory(storage);
    for (let i = 0; i < 25; i++) {
      expect(await directory(storage)).toBe(last);
      other.exec(insertOrganization(`org-${i}`));
      const next = await directory(storage);
      expect(next).toBeGreaterThan(last);
      last = next;
    }
  });

  it("sees a commit of another process", async () => {
    const storage = createSqliteStorage(file.connect());
    const before = await directory(storage);
    inAnotherProcess(file.path, insertOrganization("elsewhere"));
    expect(await directory(storage)).toBeGreaterThan(before);
    inAnotherProcess(file.path, "DELETE FROM organizations WHERE name = 'elsewhere'");
    expect(await directory(storage)).toBeGreaterThan(before + 1);
  });

  it("sees the host's own SQL on the storage's connection, which the other connections' signal does not show", async () => {
    const db = file.connect();
    const storage = createSqliteStorage(db);
    const before = await directory(storage);
    db.exec(insertOrganization("own"));
    expect(await directory(storage)).toBeGreaterThan(before);
  });

  it("sees a write rolled into the storage's own transaction helpers", async () => {
    const storage = createSqliteStorage(file.connect());
    const before = await directory(storage);
    await storage.organizations.insert({ name: "through-storage", email: null });
    expect(await directory(storage)).toBeGreaterThan(before);
  });

  it("reads no counter while nothing was committed", async () => {
    const counters: string[] = [];
    const db = file.connect();
    // The connection as the adapter sees it, noting every statement that reads the counters table.
    const watched: SqliteDatabase = Object.assign(Object.create(db) as SqliteDatabase, {
      prepare(source: string): SqliteStatement {
        const inner = db.prepare(source);
        if (!source.includes("FROM revisions")) return inner;
        return { run: (...p) => inner.run(...p), all: (...p) => inner.all(...p), get: (...p) => (counters.push(source), inner.get(...p)) };
      },
    });
    const storage = createSqliteStorage(watched);
    await directory(storage);
    const read = counters.length;
    for (let i = 0; i < 10; i++) await directory(storage);
    expect(counters.length).toBe(read);
    file.connect().exec(insertOrganization("moved"));
    await directory(storage);
    expect(counters.length).toBe(read + 1);
  });
});
