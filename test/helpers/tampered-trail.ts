import pg from "pg";
import { afterAll, describe, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import type { Storage } from "../../src/storage/types.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "./postgres.js";
import { useTempSqliteFile } from "./sqlite-files.js";

/** SQL run straight on the database, as anyone who can write it would (the audit tables' names unqualified). */
export type RawSql = (sql: string) => Promise<unknown>;

/**
 * One tampering scenario on a SQLite file and on PostgreSQL: `scenario` gets the storage and a way
 * to write the audit tables around it. Await it at the top of the test file: under CI a missing
 * database fails (postgresReachable), never skips.
 */
export async function onTamperedTrail(title: string, test: string, scenario: (storage: Storage, exec: RawSql) => Promise<void>): Promise<void> {
  describe(`${title} on SQLite`, () => {
    const file = useTempSqliteFile("rp-tampered-");
    it(test, async () => {
      const storage = createSqliteStorage(file.connect());
      const raw = file.connect();
      await scenario(storage, async (sql) => raw.exec(sql));
      await storage.close();
    });
  });
  const reachable = await postgresReachable(`${title} on PostgreSQL`);
  describe.skipIf(!reachable)(`${title} on PostgreSQL`, () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    const schema = uniqueSchema("tampered");
    afterAll(async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });
    it(test, async () => {
      const storage = await createPostgresStorage(pool, { schema });
      await scenario(storage, (sql) => pool.query(sql.replace(/audit_(events|heads)/g, (table) => `"${schema}".${table}`)));
      await storage.close();
    });
  });
}
