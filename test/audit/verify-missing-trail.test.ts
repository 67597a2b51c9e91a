import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../helpers/postgres.js";
import { join } from "node:path";
import { createSqliteStorage, openSqliteStorage } from "../../adapters/sqlite/index.js";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

const keyring = { keys: [{ id: "k", key: generateKey() }] };

/**
 * Found from outside: deleting an organization's whole trail (its events and its head row) left
 * verify passing, since it walked only the organizations that have a head. It now also walks every
 * organization of the directory: one without a trail is broken (`no-trail`).
 */
describe("audit verify: an organization whose whole trail is gone", () => {
  const file = useTempSqliteFile("rp-verify-no-trail-");
  it("is broken, with or without --organization, and an unknown name is not", async () => {
    const storage = createSqliteStorage(file.connect());
    const runplane = createRunplane({ storage, logger: silentLogger, keyring });
    await runplane.directory.organizations.create({ name: "acme" });
    await runplane.directory.organizations.create({ name: "globex" });
    await runplane.directory.teams.create({ id: "team-a", name: "a", organization: "acme" });
    expect((await runplane.audit.verify()).map((r) => [r.organization, r.broken])).toStrictEqual([["acme", null], ["globex", null]]);
    const raw = new Database(file.path);
    raw.exec(`DELETE FROM audit_events WHERE organization = 'acme'; DELETE FROM audit_heads WHERE organization = 'acme'`);
    raw.close();
    expect((await runplane.audit.verify()).map((r) => [r.organization, r.broken])).toStrictEqual([["acme", { seq: 1, reason: "no-trail" }], ["globex", null]]);
    expect((await runplane.audit.verify("acme"))[0]!.broken).toStrictEqual({ seq: 1, reason: "no-trail" });
    expect((await runplane.audit.verify("initech"))[0]!.broken).toBeNull();
    // Found from outside: the head row alone deleted hid a trail whose events were all still there.
    const again = new Database(file.path);
    again.exec(`DELETE FROM audit_heads WHERE organization = 'globex'`);
    again.close();
    expect((await runplane.audit.verify("globex"))[0]!.broken).toStrictEqual({ seq: 1, reason: "no-head" });
    await runplane.close();
  });

  it("is listed by every bundled adapter", async () => {
    const schema = uniqueSchema("verifynames");
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    try {
      const storages = [createMemoryStorage(), createSqliteStorage(new Database(":memory:")), await openSqliteStorage(join(file.dir, "thread.db")), await createPostgresStorage(pool, { schema })];
      for (const storage of storages) {
        expect(typeof storage.organizations.names, "organizations.names").toBe("function");
        await storage.close();
      }
    } finally {
      await dropSchema(pool, schema);
      await pool.end();
    }
  });

  it("lists the directory's organizations (memory here)", async () => {
    const storage = createMemoryStorage();
    const runplane = createRunplane({ storage, logger: silentLogger, keyring });
    await runplane.directory.organizations.create({ name: "zeta" });
    await runplane.directory.organizations.create({ name: "alpha" });
    expect(await storage.organizations.names!()).toStrictEqual(["alpha", "zeta"]);
    expect((await runplane.audit.verify()).map((r) => r.organization)).toStrictEqual(["alpha", "zeta"]);
    await runplane.close();
  });
});
