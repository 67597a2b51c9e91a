import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { queryPlan, useTempSqliteFile } from "../helpers/sqlite-files.js";
import { createSqliteStorage, openSqliteStorage } from "../../adapters/sqlite/index.js";
import { TEAMS_BY_MEMBER_SQL } from "../../adapters/sqlite/directory.js";
import { migrate, MIGRATIONS } from "../../adapters/sqlite/schema.js";
import { VARIABLE_SQL } from "../../adapters/sqlite/variables.js";
import { sealedColumnSql, SQL_SEALED_COLUMNS } from "../../adapters/sql/sealed-columns.js";
import type { Storage } from "../../src/storage/types.js";
import { runStorageConformance } from "../../src/testing/vitest.js";
import { sensitiveVariable, variable, WS } from "../../src/testing/conformance/fixtures.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

runStorageConformance("sqlite :memory:", async () => {
  const storage = createSqliteStorage(new Database(":memory:"));
  return { storage, reopen: async () => storage, dispose: () => storage.close() };
});

runStorageConformance("sqlite file, reopened", async () => {
  const dir = await mkdtemp(join(tmpdir(), "runplane-sqlite-"));
  const path = join(dir, "runplane.db");
  let storage = createSqliteStorage(new Database(path));
  return {
    storage,
    async reopen() {
      await storage.close();
      storage = createSqliteStorage(new Database(path));
      return storage;
    },
    async dispose() {
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe("sqlite adapter", () => {
  const files = useTempSqliteFile("runplane-sqlite-");
  const connect = (): Database.Database => files.connect();
  const userVersion = (db: Database.Database): number => Number(db.pragma("user_version", { simple: true }));


  describe("migrations", () => {
    it("applies every step once; opening the file again changes nothing and keeps the data", async () => {
      const first = createSqliteStorage(connect());
      await first.organizations.insert({ name: "acme", email: null });
      await first.close();
      const db = connect();
      const second = createSqliteStorage(db);
      expect(userVersion(db)).toBe(MIGRATIONS.length);
      expect(await second.organizations.get("acme")).toStrictEqual({ name: "acme", email: null });
      migrate(db);
      expect(userVersion(db)).toBe(MIGRATIONS.length);
    });

    it("applies only the steps above user_version", () => {
      const db = connect();
      migrate(db, MIGRATIONS.slice(0, 1));
      expect(userVersion(db)).toBe(1);
      migrate(db);
      expect(userVersion(db)).toBe(MIGRATIONS.length);
    });

    it("rolls a failing step back completely, version included", () => {
      const db = connect();
      const broken = [...MIGRATIONS.slice(0, 1), { name: "0002-broken", up: "CREATE TABLE half (x TEXT); SELECT * FROM nowhere" }];
      expect(() => migrate(db, broken)).toThrow(/migration 0002-broken failed/);
      expect(userVersion(db)).toBe(1);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
    });

    it("runs a function step inside the same transaction as the version bump", () => {
      const db = connect();
      const steps = [{ name: "0001-fn", up: (d: { exec(sql: string): unknown }) => void d.exec("CREATE TABLE t (x TEXT) STRICT") }];
      migrate(db, steps);
      expect(userVersion(db)).toBe(1);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 't'").get()).toStrictEqual({ name: "t" });
    });

    it("refuses a database migrated by a newer release", () => {
      const db = connect();
      db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
      expect(() => createSqliteStorage(db)).toThrow(/newer than this release/);
    });
  });

  describe("connection settings", () => {
    it("sets WAL, synchronous FULL, foreign keys and a busy timeout", () => {
      const db = connect();
      createSqliteStorage(db);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.pragma("synchronous", { simple: true })).toBe(2);
      expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    });

    it("takes synchronous and the busy timeout from options", () => {
      const db = connect();
      createSqliteStorage(db, { synchronous: "NORMAL", busyTimeoutMs: 250 });
      expect(db.pragma("synchronous", { simple: true })).toBe(1);
      expect(db.pragma("busy_timeout", { simple: true })).toBe(250);
    });

    it("rejects option values that are not known pragma values", () => {
      const bad = { synchronous: "OFF; DROP TABLE variables" } as unknown as { synchronous: "FULL" };
      expect(() => createSqliteStorage(connect(), bad)).toThrow(TypeError);
      expect(() => createSqliteStorage(connect(), { busyTimeoutMs: -1 })).toThrow(TypeError);
    });

    it("close() closes the database it was given; later calls reject", async () => {
      const db = connect();
      const storage = createSqliteStorage(db);
      await storage.close();
      expect(db.open).toBe(false);
      await expect(storage.organizations.get("acme")).rejects.toThrow();
      await storage.close();
    });

    it("openSqliteStorage opens the file itself and owns the connection", async () => {
      const storage = await openSqliteStorage(files.path);
      expect(await storage.variables.insert(variable())).toStrictEqual({ ok: true });
      await storage.close();
      const again = await openSqliteStorage(files.path, { synchronous: "NORMAL" });
      expect(await again.variables.get(WS, variable().id)).toStrictEqual(variable());
      await again.close();
    });
  });

  describe("queries", () => {
    const plan = queryPlan;

    it("pages variables by walking the owner index, with no sort and no scan", () => {
      const db = connect();
      createSqliteStorage(db);
      const page = plan(db, VARIABLE_SQL.page, "workspace", "ws-1", 20, 0);
      expect(page).toContain("USING INDEX variables_by_owner");
      expect(page).not.toContain("TEMP B-TREE");
      expect(plan(db, VARIABLE_SQL.count, "workspace", "ws-1")).toMatch(/USING (COVERING )?INDEX/);
    });

    it("scans each kind of sealed value in id order through an index, with no sort", () => {
      const db = connect();
      createSqliteStorage(db);
      const indexes = { "vars.value": "variables_sensitive_by_id", "tasks.hmac_key": "run_tasks_sealed_by_id", "task_deliveries.payload": "sqlite_autoindex_task_delivery_payloads_1" };
      for (const [name, column] of Object.entries(SQL_SEALED_COLUMNS)) {
        const after = plan(db, sealedColumnSql("", column).after, { after: "x-1", head: 70, limit: 10 });
        expect(after).toContain(indexes[name as keyof typeof indexes]);
        expect(after).not.toContain("TEMP B-TREE");
      }
    });

    it("finds a user's teams through the membership index", () => {
      const db = connect();
      createSqliteStorage(db);
      const byMember = plan(db, TEAMS_BY_MEMBER_SQL, "user-1", "acme");
      expect(byMember).toContain("team_members_by_user");
      expect(byMember).not.toContain("TEMP B-TREE");
      expect(byMember).not.toMatch(/SCAN t\b|SCAN teams/);
    });

    it("puts no value into the error of a refused write", async () => {
      const storage = createSqliteStorage(connect());
      const secret = sensitiveVariable({ value: "sealed-SECRET", key: "key-SECRET" });
      await storage.variables.insert(secret);
      const error = await storage.variables.insert({ ...secret, key: "other-SECRET" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(String((error as Error).message)).not.toContain("SECRET");
    });

    it("imports no better-sqlite3 type: the host's database is typed structurally", async () => {
      const folder = join(ROOT, "adapters/sqlite");
      for (const file of await readdir(folder)) {
        const source = await readFile(join(folder, file), "utf8");
        expect(source, file).not.toMatch(/from\s+["']better-sqlite3["']/);
      }
    });
  });

  describe("several connections to one file", () => {
    it("checks guards in the database, not in one connection's memory", async () => {
      const one = createSqliteStorage(connect());
      const two = createSqliteStorage(connect());
      const a = variable();
      expect(await one.variables.insert(a)).toStrictEqual({ ok: true });
      expect(await two.variables.insert({ ...a, id: "var-other" })).toStrictEqual({ ok: false, reason: "duplicate-key" });
      expect(await two.variables.update({ ...a, versionId: "v2" }, a.versionId)).toStrictEqual({ ok: true });
      expect(await one.variables.update({ ...a, versionId: "v3" }, a.versionId)).toStrictEqual({ ok: false, reason: "stale" });
      expect(await one.variables.get(WS, a.id)).toStrictEqual({ ...a, versionId: "v2" });
    });

    it("lets processes race on one file: one winner per guard, no lost update", async () => {
      const seed = createSqliteStorage(connect());
      await seed.variables.insert(variable({ id: "var-seed", key: "seed" }));
      await seed.variables.insert(variable({ id: "var-counter", key: "counter", value: "0" }));
      await seed.variables.insert(sensitiveVariable({ id: "var-sealed", key: "sealed", value: "old" }));
      await seed.close();

      const results = await racingProcesses(files.path, 4, 15);
      expect(results.filter((r) => r.inserted)).toHaveLength(1);
      expect(results.filter((r) => r.updated)).toHaveLength(1);
      expect(results.filter((r) => r.swapped)).toHaveLength(1);

      const check = createSqliteStorage(connect());
      expect((await check.variables.get(WS, "var-counter"))?.value).toBe(String(4 * 15));
      expect((await check.variables.list(WS)).items.filter((v) => v.key === "raced")).toHaveLength(1);
    }, 60_000);
  });
});

interface RaceResult {
  inserted: boolean;
  updated: boolean;
  swapped: boolean;
}

/**
 * Starts `count` Node processes on the same file; each waits for "go" on stdin, then races one
 * insert, one update and one sealed-value swap, and adds 1 to a counter `increments` times with
 * compare-and-set retries.
 */
async function racingProcesses(path: string, count: number, increments: number): Promise<RaceResult[]> {
  const script = `
    const [adapter, path, index, increments] = process.argv.slice(1);
    const { openSqliteStorage } = await import(adapter);
    const s = await openSqliteStorage(path);
    const ws = { kind: "workspace", id: "${WS.id}" };
    const base = await s.variables.get(ws, "var-seed");
    process.stdout.write("ready\\n");
    await new Promise((resolve) => process.stdin.once("data", resolve));
    const inserted = (await s.variables.insert({ ...base, id: "var-p" + index, key: "raced" })).ok;
    const updated = (await s.variables.update({ ...base, value: "p" + index, versionId: "p" + index }, base.versionId)).ok;
    const swapped = await s.sealedValues.replace("vars.value", "var-sealed", "old", "new-" + index);
    for (let i = 0; i < Number(increments); i++) {
      for (;;) {
        const row = await s.variables.get(ws, "var-counter");
        const next = { ...row, value: String(Number(row.value) + 1), versionId: "c" + index + "-" + i };
        if ((await s.variables.update(next, row.versionId)).ok) break;
      }
    }
    await s.close();
    process.stdout.write(JSON.stringify({ inserted, updated, swapped }) + "\\n");
    process.stdin.destroy();
  `;
  const adapter = join(ROOT, "adapters/sqlite/index.ts");
  const children = Array.from({ length: count }, (_, index) =>
    spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, adapter, path, String(index), String(increments)], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    }),
  );
  const outputs = children.map((child) => {
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on("data", () => stdout.includes("ready\n") && resolve());
      child.on("exit", () => reject(new Error(`racer exited before ready: ${stderr}`)));
    });
    const done = new Promise<RaceResult>((resolve, reject) => {
      child.on("exit", (code) => {
        const last = stdout.trim().split("\n").at(-1) ?? "";
        if (code === 0) resolve(JSON.parse(last) as RaceResult);
        else reject(new Error(`racer exited with ${code}: ${stderr}`));
      });
    });
    done.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
    return { ready, done };
  });
  try {
    await Promise.all(outputs.map((o) => o.ready));
    for (const child of children) child.stdin.write("go\n");
    return await Promise.all(outputs.map((o) => o.done));
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}
