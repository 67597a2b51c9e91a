import pg from "pg";
import { DATABASE_URL } from "../../test/helpers/postgres.js";

// The tests' database defaults and probe, so `npm test` and `npm run bench` agree on DATABASE_URL.
export { DATABASE_URL, probeDatabase as whyNoDatabase, uniqueSchema as benchSchema } from "../../test/helpers/postgres.js";

/** Drops the schemas a bench server or rig created (each named by `benchSchema`). */
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
