import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { migrate as migratePostgres, MIGRATIONS as PG_MIGRATIONS } from "../../adapters/postgres/schema.js";
import { AUDIT_SQL } from "../../adapters/sqlite/audit.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { migrate as migrateSqlite, MIGRATIONS as SQLITE_MIGRATIONS } from "../../adapters/sqlite/schema.js";
import type { AuditHead } from "../../src/storage/audit-chain.js";
import type { Storage } from "../../src/storage/types.js";
import { auditEvent, walkChain } from "../../src/testing/conformance/audit.cases.js";
import { legacyTrail, migrationsBefore, storeLegacyPostgres, storeLegacySqlite } from "./legacy-audit-trail.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { queryPlan } from "../helpers/sqlite-files.js";

/**
 * decision D59, change of 2026-11-29: the `audit-by-seq` migration drops the index by time. A trail
 * stored before it (ties of time, a clock-lagging event) still lists by `since`, prunes and verifies
 * after it; the index is gone; `since` and pruning read the events by their primary key only.
 */
const before = <M extends { name: string }>(list: readonly M[]) => migrationsBefore(list, "-audit-by-seq");
const T0 = Date.UTC(2026, 0, 1);
const SECONDS = [1, 2, 2, 3, 1, 4];
/** Six chained rows of acme (times 1, 2, 2, 3, 3 clamped from 1, 4 seconds) and their head. */
const legacy = () => legacyTrail(SECONDS.map((s, i) => auditEvent(i + 1, { at: T0 + s * 1000 })));

async function expectCarriedOver(storage: Storage, head: AuditHead): Promise<void> {
  const audit = storage.audit!;
  const since = async (s: number) => (await audit.list("acme", { sinceMs: T0 + s * 1000, offset: 0, limit: 10 })).items.map((e) => e.seq);
  expect(await walkChain(audit, "acme")).toBeNull();
  expect([await since(0), await since(1), await since(2), await since(3), await since(4)]).toStrictEqual([[1, 2, 3, 4, 5, 6], [2, 3, 4, 5, 6], [4, 5, 6], [6], []]);
  expect(await audit.prune(T0 + 2500, 100)).toBe(3);
  expect(await since(0)).toStrictEqual([4, 5, 6]);
  expect(await walkChain(audit, "acme")).toBeNull();
  const next = await audit.append(auditEvent(7, { at: T0 }));
  expect([next.seq, next.prev, next.at]).toStrictEqual([7, head.digest, T0 + 4000]);
  expect(await since(3)).toStrictEqual([6, 7]);
  expect(await walkChain(audit, "acme")).toBeNull();
}

describe("sqlite: 0023-audit-by-seq", () => {
  it("keeps a trail stored before it listing by since, pruning and verifiable", async () => {
    const db = new Database(":memory:");
    migrateSqlite(db, before(SQLITE_MIGRATIONS));
    const trail = legacy();
    // The table's trigger (0022) advances the head.
    storeLegacySqlite(db, trail, { head: false });
    const { head } = trail;
    const storage = createSqliteStorage(db);
    await expectCarriedOver(storage, head);
    await storage.close();
  });

  it("drops the index by time: the events keep their primary key only", () => {
    const db = new Database(":memory:");
    createSqliteStorage(db);
    const indexes = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit_events'`).all() as { name: string }[];
    expect(indexes.map((i) => i.name)).toStrictEqual(["sqlite_autoindex_audit_events_1"]);
  });

  it("finds since and the oldest events by the primary key, never a scan of the events", () => {
    const db = new Database(":memory:");
    createSqliteStorage(db);
    for (const plan of [queryPlan(db, AUDIT_SQL.firstAfter, { organization: "acme", since: 0 }), queryPlan(db, AUDIT_SQL.oldest, { organization: "acme", before: 0, limit: 10 })]) {
      expect(plan).toContain("USING INDEX sqlite_autoindex_audit_events_1");
      // The statements name the events table p, f and e; s and w are the recursive queries' own rows.
      expect(plan).not.toMatch(/SCAN (audit_events|[pfe])\b|audit_events_by_time|TEMP B-TREE/);
    }
  });
});

// Under CI a missing database fails (postgresReachable), never skips.
const reachable = await postgresReachable("the audit-by-seq migration on PostgreSQL");
describe.skipIf(!reachable)("postgres: 0020-audit-by-seq", () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  pool.on("error", () => undefined);
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  it("keeps a trail stored before it listing by since, pruning and verifiable, and drops the index by time", async () => {
    const schema = uniqueSchema("auditseq");
    schemas.push(schema);
    await migratePostgres(pool, schema, before(PG_MIGRATIONS));
    const trail = legacy();
    await storeLegacyPostgres(pool, schema, trail);
    const { head } = trail;
    const storage = await createPostgresStorage(pool, { schema });
    const { rows: indexes } = await pool.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'audit_events'`, [schema]);
    expect(indexes.map((i) => i.indexname)).toStrictEqual(["audit_events_pkey"]);
    await expectCarriedOver(storage, head);
    await storage.close();
  });
});
