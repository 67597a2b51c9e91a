import { closeSync, existsSync, openSync } from "node:fs";
import { join } from "node:path";
import { migrate as migratePostgres, pendingMigrations as pendingPostgres } from "../../adapters/postgres/schema.js";
import { MIGRATIONS, migrate as migrateSqlite, pendingMigrations as pendingSqlite } from "../../adapters/sqlite/schema.js";
import { openDataDir } from "../../examples/server/state.js";
import { importOptional } from "../optional-peer.js";
import { DATABASE_FLAGS, dataDirOf, parse } from "./args.js";

/**
 * `runplane migrate [--dry-run]`: brings the server's database (the SQLite file in the data
 * directory, or PostgreSQL with --database-url) to this release's schema, or with `--dry-run`
 * lists the steps it would apply and applies nothing. Safe while servers run (each step takes the
 * adapter's own lock and re-reads the version).
 */
export async function migrate(args: string[], out: (line: string) => void): Promise<void> {
  const { values, env } = parse(args, { "dry-run": { type: "boolean" } }, DATABASE_FLAGS);
  const dryRun = values["dry-run"] === true;
  const url = env.DATABASE_URL?.trim();
  const pending = url ? await postgres(url, env.DATABASE_SCHEMA?.trim() || "public", dryRun) : await sqlite(env, dryRun);
  if (pending.length === 0) out("schema is up to date: nothing to apply");
  for (const name of pending) out(`${dryRun ? "pending" : "applied"}: ${name}`);
}

async function sqlite(env: NodeJS.ProcessEnv, dryRun: boolean): Promise<string[]> {
  const dir = dataDirOf(env);
  const path = join(dir, "runplane.db");
  // A dry run creates nothing: an absent file is an empty database.
  if (dryRun && !existsSync(path)) return MIGRATIONS.map((m) => m.name);
  // A mistyped folder would become a new, empty database that no server uses.
  if (!existsSync(dir)) throw new Error(`data directory ${dir} does not exist: create it (mkdir -p ${dir}) or point --data-dir (DATA_DIR) at the server's data directory`);
  if (!dryRun) {
    openDataDir(dataDirOf(env), env);
    closeSync(openSync(path, "a", 0o600));
  }
  const { default: Database } = await importOptional(() => import("better-sqlite3"), "better-sqlite3", "migrate on the SQLite file");
  const db = new Database(path);
  try {
    const pending = pendingSqlite(db);
    if (!dryRun) migrateSqlite(db);
    return pending;
  } finally {
    db.close();
  }
}

async function postgres(url: string, schema: string, dryRun: boolean): Promise<string[]> {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error("DATABASE_URL must be a postgres:// or postgresql:// URL");
  const pg = (await importOptional(() => import("pg"), "pg", "DATABASE_URL (PostgreSQL)")).default;
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on("error", () => undefined);
  try {
    const pending = await pendingPostgres(pool, schema);
    if (!dryRun) await migratePostgres(pool, schema);
    return pending;
  } finally {
    await pool.end();
  }
}
