import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { migrate as migratePostgres, MIGRATIONS as PG_MIGRATIONS } from "../../adapters/postgres/schema.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { migrate as migrateSqlite, MIGRATIONS as SQLITE_MIGRATIONS } from "../../adapters/sqlite/schema.js";
import type { AuditHead } from "../../src/storage/audit-chain.js";
import type { Storage } from "../../src/storage/types.js";
import { auditEvent, walkChain } from "../../src/testing/conformance/audit.cases.js";
import { legacyTrail, migrationsBefore, storeLegacyPostgres, storeLegacySqlite } from "./legacy-audit-trail.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";

/**
 * decision D59: the `audit-one-insert` migration. A trail stored before it (three events of acme,
 * their head) still verifies after it, lists alike, and the next event links to its head.
 */
const before = <M extends { name: string }>(list: readonly M[]) => migrationsBefore(list, "-audit-one-insert");
/** Three chained rows and their head, as D53's adapters stored them. */
const legacy = () => legacyTrail([1, 2, 3].map((n) => auditEvent(n)));

async function expectCarriedOver(storage: Storage, head: AuditHead): Promise<void> {
  expect(await walkChain(storage.audit!, "acme")).toBeNull();
  expect((await storage.audit!.list("acme", { offset: 0, limit: 10 })).items.map((e) => e.seq)).toStrictEqual([1, 2, 3]);
  const next = await storage.audit!.append(auditEvent(4));
  expect([next.seq, next.prev]).toStrictEqual([4, head.digest]);
  expect(await walkChain(storage.audit!, "acme")).toBeNull();
}

describe("sqlite: 0022-audit-one-insert", () => {
  it("keeps a trail stored before it verifiable, and links the next event to its head", async () => {
    const db = new Database(":memory:");
    migrateSqlite(db, before(SQLITE_MIGRATIONS));
    const trail = legacy();
    storeLegacySqlite(db, trail);
    const { head } = trail;
    const storage = createSqliteStorage(db);
    await expectCarriedOver(storage, head);
    await storage.close();
  });
});

// Under CI a missing database fails (postgresReachable), never skips.
const reachable = await postgresReachable("the audit-one-insert migration on PostgreSQL");
describe.skipIf(!reachable)("postgres: 0019-audit-one-insert", () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  pool.on("error", () => undefined);
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  it("keeps a trail stored before it verifiable, and links the next event to its head", async () => {
    const schema = uniqueSchema("auditmig");
    schemas.push(schema);
    await migratePostgres(pool, schema, before(PG_MIGRATIONS));
    const trail = legacy();
    await storeLegacyPostgres(pool, schema, trail);
    const { head } = trail;
    const storage = await createPostgresStorage(pool, { schema });
    await expectCarriedOver(storage, head);
    await storage.close();
  });
});
