import pg from "pg";

/** The database the PostgreSQL scenarios use: `DATABASE_URL`, or the local default. */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Why PostgreSQL cannot be used, or null when it answers. Never quotes the URL (it may hold a password). */
export async function whyNoDatabase(): Promise<string | null> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return `no PostgreSQL at ${new URL(DATABASE_URL).host} (${typeof code === "string" ? code : (error as Error).name})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A schema name of its own for one bench server or rig; `dropSchemas` removes it afterwards. */
export const benchSchema = (label: string): string => `rp_bench_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

export async function dropSchemas(...schemas: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  client.on("error", () => undefined);
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
