import { mkdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS as PG_MIGRATIONS } from "../../adapters/postgres/schema.js";
import { MIGRATIONS as SQLITE_MIGRATIONS } from "../../adapters/sqlite/schema.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { run, scratchDirs } from "./helpers.js";

const { fresh, made } = scratchDirs();

describe("runplane migrate (SQLite)", () => {
  it("lists every pending step with --dry-run and creates nothing, then applies them, then has nothing left", async () => {
    const dir = fresh();
    const names = SQLITE_MIGRATIONS.map((m) => m.name);
    const dry = await run(["migrate", "--dry-run", "--data-dir", dir]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(names.map((name) => `pending: ${name}\n`).join(""));
    expect(existsSync(dir)).toBe(false);

    // A missing data directory is refused, not made into a database no server uses.
    const missing = await run(["migrate", "--data-dir", dir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`runplane migrate: data directory ${dir} does not exist: create it (mkdir -p ${dir}) or point --data-dir (DATA_DIR) at the server's data directory\n`);
    expect(existsSync(dir)).toBe(false);

    mkdirSync(dir);
    const applied = await run(["migrate", "--data-dir", dir]);
    expect(applied.stdout).toBe(names.map((name) => `applied: ${name}\n`).join(""));
    const db = new Database(join(dir, "runplane.db"), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(names.length);
    db.close();
    expect((await run(["migrate", "--dry-run", "--data-dir", dir])).stdout).toBe("schema is up to date: nothing to apply\n");
  });

  it("refuses, in one line, a database a newer runplane migrated further", async () => {
    const dir = made();
    await run(["migrate", "--data-dir", dir]);
    const db = new Database(join(dir, "runplane.db"));
    db.pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`);
    db.close();
    const result = await run(["migrate", "--dry-run", "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^runplane migrate: runplane sqlite: database schema is version \d+, this runplane knows \d+: upgrade runplane[^\n]*\n$/);
  });
});

if (await postgresReachable("runplane migrate (PostgreSQL)")) {
  describe("runplane migrate (PostgreSQL)", () => {
    const schema = uniqueSchema("cli");
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    afterAll(async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });

    it("lists the pending steps without creating the schema, then applies them", async () => {
      const flags = ["--database-url", DATABASE_URL, "--database-schema", schema];
      const names = PG_MIGRATIONS.map((m) => m.name);
      const dry = await run(["migrate", "--dry-run", ...flags]);
      expect(dry.stdout).toBe(names.map((name) => `pending: ${name}\n`).join(""));
      const exists = async () => (await pool.query("SELECT to_regnamespace($1) IS NOT NULL AS e", [schema])).rows[0].e as boolean;
      expect(await exists()).toBe(false);
      expect((await run(["migrate", ...flags])).stdout).toBe(names.map((name) => `applied: ${name}\n`).join(""));
      expect(await exists()).toBe(true);
      expect((await run(["migrate", "--dry-run", ...flags])).stdout).toBe("schema is up to date: nothing to apply\n");
    });
  });
}
