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
 * decision D60: the SQLite revision store answers the reads of one event-loop turn with one
 * statement, run after they all asked. Every commit it could miss is made here somewhere else than
 * through the storage, and the very next read must show it.
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

  it("sees the host's own SQL on the storage's connection", async () => {
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

  /** The connection as the adapter sees it, noting each run of a statement whose text has `marker`. */
  function watched(marker: string): { db: SqliteDatabase; runs: string[] } {
    const runs: string[] = [];
    const db = file.connect();
    const wrapped: SqliteDatabase = Object.assign(Object.create(db) as SqliteDatabase, {
      prepare(source: string): SqliteStatement {
        const inner = db.prepare(source);
        if (!source.includes(marker)) return inner;
        return { run: (...p) => inner.run(...p), all: (...p) => inner.all(...p), get: (...p) => (runs.push(source), inner.get(...p)) };
      },
    });
    return { db: wrapped, runs };
  }

  it("sees a commit made after an earlier read of the same turn was asked", async () => {
    const storage = createSqliteStorage(file.connect());
    const other = file.connect();
    const before = await directory(storage);
    const early = directory(storage);
    other.exec(insertOrganization("between"));
    const late = directory(storage);
    expect(await late).toBeGreaterThan(before);
    expect(await early).toBeGreaterThanOrEqual(before);
  });

  it("reads the counters once for all the reads asked in one event-loop turn", async () => {
    const { db, runs } = watched("FROM revisions");
    const storage = createSqliteStorage(db);
    await directory(storage);
    const before = runs.length;
    const reads = await Promise.all(Array.from({ length: 20 }, () => directory(storage)));
    expect(new Set(reads).size).toBe(1);
    expect(runs.length).toBe(before + 1);
    // The next turn reads again: nothing is remembered between turns.
    await directory(storage);
    expect(runs.length).toBe(before + 2);
  });

  it("answers each scope asked in a turn, 0 for one never written, many scopes at once", async () => {
    const storage = createSqliteStorage(file.connect());
    await storage.organizations.insert({ name: "acme", email: null });
    const scopes = Array.from({ length: 70 }, (_, i) => `vars:workspace:ws-${i}`);
    const [all, again] = await Promise.all([storage.revisions!.read([DIRECTORY_SCOPE, ...scopes]), storage.revisions!.read([scopes[3]!, DIRECTORY_SCOPE])]);
    expect(all![0]).toBeGreaterThan(0);
    expect(all!.slice(1)).toStrictEqual(scopes.map(() => 0));
    expect(again).toStrictEqual([0, all![0]]);
  });
});
