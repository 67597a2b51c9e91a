import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { migrate as migratePostgres, MIGRATIONS as PG_MIGRATIONS } from "../../adapters/postgres/schema.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { migrate as migrateSqlite, MIGRATIONS as SQLITE_MIGRATIONS } from "../../adapters/sqlite/schema.js";
import type { Storage } from "../../src/storage/types.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";

// decision D41: the team-owners step. Teams stored before it keep what they could do: a team named
// "owners" (which acted as owners by its name) is marked owners; a name taken twice in one
// organization stays with the lowest id, the others get their id appended; then names are unique.

const before = <M extends { name: string }>(list: readonly M[]) => list.slice(0, list.findIndex((m) => m.name.endsWith("-team-owners")));
const TEAMS: [string, string, string][] = [
  ["team-a", "acme", "owners"],
  ["team-b", "acme", "owners"],
  ["team-c", "acme", "devs"],
  ["team-d", "other", "owners"],
  ["team-e", "other", "devs"],
];
const legacy = (id: string, organization: string, name: string) => ({ id, organization, name, visibility: "secret", org_permissions: "[]", members: "[]" });

async function expectMigrated(storage: Storage): Promise<void> {
  const teams = [...(await storage.teams.listByOrganization("acme")), ...(await storage.teams.listByOrganization("other"))];
  expect(teams.map((t) => [t.id, t.name, t.owners])).toStrictEqual([
    ["team-a", "owners", true],
    ["team-b", "owners (team-b)", true],
    ["team-c", "devs", false],
    ["team-d", "owners", true],
    ["team-e", "devs", false],
  ]);
  const second = { id: "team-f", organization: "acme", name: "devs", visibility: "secret" as const, orgPermissions: [], members: [], owners: false };
  expect(await storage.teams.insert(second)).toBe(false);
}

describe("sqlite: the team-owners step", () => {
  it("marks the teams named owners, makes names unique per organization, and refuses a duplicate after", async () => {
    const db = new Database(":memory:");
    migrateSqlite(db, before(SQLITE_MIGRATIONS));
    const insert = db.prepare("INSERT INTO teams (id, organization, name, visibility, org_permissions, members) VALUES (@id, @organization, @name, @visibility, @org_permissions, @members)");
    for (const t of TEAMS) insert.run(legacy(...t));
    const storage = createSqliteStorage(db);
    await expectMigrated(storage);
    await storage.close();
  });
});

const reachable = await postgresReachable("team owners migration");
describe.skipIf(!reachable)("postgres: the team-owners step", () => {
  const schema = uniqueSchema("teamowners");
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  it("marks the teams named owners, makes names unique per organization, and refuses a duplicate after", async () => {
    await migratePostgres(pool, schema, before(PG_MIGRATIONS));
    for (const t of TEAMS) {
      const row = legacy(...t);
      await pool.query(`INSERT INTO "${schema}".teams (id, organization, name, visibility, org_permissions, members) VALUES ($1, $2, $3, $4, $5, $6)`, [
        row.id,
        row.organization,
        row.name,
        row.visibility,
        row.org_permissions,
        row.members,
      ]);
    }
    const storage = await createPostgresStorage(pool, { schema });
    await expectMigrated(storage);
    await storage.close();
  });
});
