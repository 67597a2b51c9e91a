import pg from "pg";
import { describe, it } from "vitest";

/** The database the PostgreSQL tests use: `DATABASE_URL`, or the local default. */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * Why the PostgreSQL tests cannot run here, or null when the database answers. Locally they skip
 * with that reason; under CI (`CI` set) a missing database fails them instead (see `pgSkip`).
 */
export async function probeDatabase(url = DATABASE_URL): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return `no PostgreSQL at ${new URL(url).host} (${typeof code === "string" ? code : (error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Probes the database for a test file and says whether its PostgreSQL suites run. Without a
 * database they skip locally, printing why; under CI (`CI` set) a case that fails takes their place.
 */
export async function postgresReachable(label: string): Promise<boolean> {
  const unreachable = await probeDatabase();
  if (unreachable === null) return true;
  if (process.env.CI) {
    describe(`${label}: database`, () => {
      it("answers at DATABASE_URL", () => {
        throw new Error(`CI needs PostgreSQL: ${unreachable}`);
      });
    });
  } else {
    console.warn(`${label} tests skipped: ${unreachable} (set DATABASE_URL)`);
  }
  return false;
}

/** A schema name no other test file (or run) uses. */
export const uniqueSchema = (label: string): string => `rp_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Empties every runplane table of `schema` in one transaction (about 5 ms; TRUNCATE takes about
 * half a second here). The revision triggers run at commit, so they are made immediate first and
 * the counters deleted last: the next case starts from a store whose counters read 0, exactly
 * like a new database.
 */
export async function resetSchema(pool: pg.Pool, schema: string): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name NOT IN ('runplane_schema_version', 'revisions')`,
    [schema],
  );
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET CONSTRAINTS ALL IMMEDIATE");
    for (const { name } of rows) await client.query(`DELETE FROM "${schema}"."${name}"`);
    await client.query(`DELETE FROM "${schema}".revisions`);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}
