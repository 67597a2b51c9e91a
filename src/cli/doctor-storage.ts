import { existsSync } from "node:fs";
import { join } from "node:path";
import { pendingMigrations as pendingPostgres } from "../../adapters/postgres/schema.js";
import { pendingMigrations as pendingSqlite } from "../../adapters/sqlite/schema.js";
import { importOptional } from "../optional-peer.js";
import { dataDirOf } from "./args.js";

type Verdict = { fix: string } | { note: string };

/** `doctor`'s storage check: the database opens, read only, and its schema is one this release knows. */
export async function pendingOf(env: NodeJS.ProcessEnv): Promise<Verdict> {
  const url = env.DATABASE_URL?.trim();
  let where: string;
  let pending: string[];
  if (url) {
    if (!/^postgres(ql)?:\/\//.test(url)) return { fix: "DATABASE_URL must be a postgres:// or postgresql:// URL" };
    const schema = env.DATABASE_SCHEMA?.trim() || "public";
    const pg = (await importOptional(() => import("pg"), "pg", "DATABASE_URL (PostgreSQL)")).default;
    const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5_000 });
    pool.on("error", () => undefined);
    try {
      pending = await pendingPostgres(pool, schema);
    } catch (error) {
      return { fix: `PostgreSQL: ${error instanceof Error ? error.message : String(error)}: check DATABASE_URL and that the server runs` };
    } finally {
      await pool.end().catch(() => undefined);
    }
    const { host, pathname } = new URL(url);
    where = `PostgreSQL ${host}${pathname}, schema ${schema}`;
  } else {
    const path = join(dataDirOf(env), "runplane.db");
    if (!existsSync(path)) return { note: `SQLite file ${path} does not exist yet (the first start creates it)` };
    const { default: Database } = await importOptional(() => import("better-sqlite3"), "better-sqlite3", "the SQLite file");
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      pending = pendingSqlite(db);
    } finally {
      db.close();
    }
    where = `SQLite file ${path}`;
  }
  const state = pending.length ? `${pending.length} migration(s) pending (\`runplane migrate\` or the next start applies them)` : "schema up to date";
  return { note: `${where}, ${state}` };
}
