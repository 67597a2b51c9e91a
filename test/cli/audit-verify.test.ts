import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import type { Storage } from "../../src/storage/types.js";
import { toAuditRow } from "../../adapters/sql/audit-rows.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { digestOfText, EMPTY_HEAD, linkEvent } from "../../src/storage/audit-chain.js";
import { auditEvent } from "../../src/testing/conformance/audit.cases.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { run, scratchDirs } from "./helpers.js";

const { made } = scratchDirs();

/** Three events of acme and one of globex, through the adapter as a server would store them. */
async function seed(storage: Storage): Promise<void> {
  for (let n = 1; n <= 3; n++) await storage.audit!.append(auditEvent(n));
  await storage.audit!.append(auditEvent(4, { organization: "globex" }));
  await storage.close();
}

/** Each way a row is tampered with, as SQL any database client could send, and what verify says. */
const TAMPERING: [string, (q: string) => string, RegExp][] = [
  ["an edited row", (q) => `UPDATE ${q}audit_events SET body = replace(body, 'team owners', 'team devs') WHERE organization = 'acme' AND seq = 2`, /^acme: BROKEN at event 2: its content does not match its digest \(the row was edited\); 1 event before it verified$/m],
  ["a deleted row", (q) => `DELETE FROM ${q}audit_events WHERE organization = 'acme' AND seq = 2`, /^acme: BROKEN at event 2: it is missing \(the row was deleted\)/m],
  ["the newest row deleted", (q) => `DELETE FROM ${q}audit_events WHERE organization = 'acme' AND seq = 3`, /^acme: BROKEN at event 3: the chain ends before its recorded head/m],
];

// decision D53: `runplane audit verify` names the first break of a chain, on SQLite and PostgreSQL.
describe("runplane audit verify on SQLite", () => {
  it.each(TAMPERING)("passes an intact chain, then catches %s (exit 1)", async (_what, tamper, message) => {
    const dir = made();
    const path = join(dir, "runplane.db");
    await seed(createSqliteStorage(new Database(path)));
    const intact = await run(["audit", "verify", "--data-dir", dir]);
    expect(intact.stderr).toBe("");
    expect(intact.stdout).toMatch(/^acme: 3 events verified, head [0-9a-f]{64}\nglobex: 1 event verified, head [0-9a-f]{64}\n$/);
    expect(intact.code).toBe(0);
    const db = new Database(path);
    db.exec(tamper(""));
    db.close();
    const broken = await run(["audit", "verify", "--data-dir", dir]);
    expect(broken.stdout).toMatch(message);
    expect(broken.stdout).toMatch(/^globex: 1 event verified/m);
    expect(broken.code).toBe(1);
  }, 60_000);

  it("reads only the database: it writes no keyring into a data directory that has none (found from outside)", async () => {
    const dir = made();
    await seed(createSqliteStorage(new Database(join(dir, "runplane.db"))));
    const before = readdirSync(dir).sort();
    const verified = await run(["audit", "verify", "--data-dir", dir]);
    expect([verified.code, verified.stderr]).toStrictEqual([0, ""]);
    expect(readdirSync(dir).filter((f) => !/^runplane\.db(-wal|-shm)?$/.test(f))).toStrictEqual(before.filter((f) => f !== "runplane.db"));
    expect(existsSync(join(dir, "keyring.json"))).toBe(false);
  }, 60_000);
});

// Found from outside (an auditor): a chain rewritten whole, head included, links again, and a
// misspelt organization passed as verified.
describe("runplane audit verify against a head kept elsewhere", () => {
  /** acme's three events, then its events 2 and 3 rewritten and linked again by someone with the file. */
  function rewrite(path: string): void {
    const db = new Database(path);
    db.exec(`DELETE FROM audit_events WHERE organization = 'acme' AND seq >= 2`);
    const one = db.prepare(`SELECT seq, digest, at FROM audit_events WHERE organization = 'acme' AND seq = 1`).get() as { seq: number; digest: string; at: number };
    let head = { ...EMPTY_HEAD, ...one };
    const insert = db.prepare(`INSERT INTO audit_events (organization, seq, id, at, body, digest) VALUES (@organization, @seq, @id, @at, @body, @digest)`);
    for (const event of [auditEvent(2, { action: "delete" }), auditEvent(3)]) {
      const linked = linkEvent(event, head);
      insert.run(toAuditRow(linked.entry, linked.text));
      head = linked.head;
    }
    db.close();
  }

  it("finds a kept head in a chain that grew, and not in one rewritten whole (runplane.audit.verify)", async () => {
    const path = join(made(), "runplane.db");
    const storage = createSqliteStorage(new Database(path));
    const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k", key: generateKey() }] } });
    for (let n = 1; n <= 3; n++) await storage.audit!.append(auditEvent(n));
    const [kept] = await runplane.audit.verify("acme");
    await storage.audit!.append(auditEvent(4));
    expect((await runplane.audit.verify("acme", { expect: kept!.headDigest! }))[0]).toMatchObject({ events: 4, broken: null, expected: { seq: 3 } });
    await runplane.close();
    rewrite(path); // events 2-4 become 2-3, relinked
    const again = createSqliteStorage(new Database(path));
    const reopened = createRunplane({ storage: again, logger: silentLogger, keyring: { keys: [{ id: "k", key: generateKey() }] } });
    const [plain] = await reopened.audit.verify("acme");
    expect(plain).toMatchObject({ events: 3, broken: null, pruned: 0 });
    // Pruning is named: a deleted prefix passed off as retention shows in what verify says.
    await again.audit!.prune(auditEvent(1).at + 1, 10);
    expect((await reopened.audit.verify("acme"))[0]).toMatchObject({ events: 2, broken: null, pruned: 1 });
    expect((await reopened.audit.verify("acme", { expect: kept!.headDigest! }))[0]).toMatchObject({ events: 2, broken: null, expected: { seq: null } });
    await reopened.close();
  });

  // Found from outside: a row edited and given a fresh digest read "BROKEN at event 3: does not
  // link", naming the event after the edited one as if it were the one at fault.
  it("names both events of a link that does not hold: either one was rewritten with a fresh digest", async () => {
    const dir = made();
    const path = join(dir, "runplane.db");
    await seed(createSqliteStorage(new Database(path)));
    const db = new Database(path);
    const row = db.prepare(`SELECT body FROM audit_events WHERE organization = 'acme' AND seq = 2`).get() as { body: string };
    const body = row.body.replace("team owners", "team devs");
    db.prepare(`UPDATE audit_events SET body = ?, digest = ? WHERE organization = 'acme' AND seq = 2`).run(body, digestOfText(body));
    db.close();
    const broken = await run(["audit", "verify", "--organization", "acme", "--data-dir", dir]);
    expect(broken.stdout).toBe("acme: BROKEN between events 2 and 3: event 3 does not link to event 2 (one of the two was rewritten with a fresh digest, or rows were replaced or reordered); 1 event before them verified\n");
    expect(broken.code).toBe(1);
  }, 60_000);

  it("exits 1 naming the kept head a rewritten chain lacks, and for an organization with no trail", async () => {
    const dir = made();
    const path = join(dir, "runplane.db");
    await seed(createSqliteStorage(new Database(path)));
    const kept = /head ([0-9a-f]{64})/.exec((await run(["audit", "verify", "--organization", "acme", "--data-dir", dir])).stdout)![1]!;
    rewrite(path);
    const checked = await run(["audit", "verify", "--organization", "acme", "--expect-head", kept, "--data-dir", dir]);
    expect(checked.stdout).toBe(`acme: BROKEN: the head kept elsewhere (${kept}) is not in the chain (the chain was rewritten, or pruned past it); 3 events otherwise verified\n`);
    expect(checked.code).toBe(1);
    const misspelt = await run(["audit", "verify", "--organization", "acne", "--data-dir", dir]);
    expect(misspelt.code).toBe(1);
    expect(misspelt.stdout).toBe('acne: no audit events\nno organization named "acne" has a trail here (run without --organization to list those that have one)\n');
    // Found from outside: an organization's whole trail deleted (events and head) passed verify.
    const db = new Database(path);
    db.exec(`INSERT INTO organizations (name, email) VALUES ('globex', NULL); DELETE FROM audit_events WHERE organization = 'globex'; DELETE FROM audit_heads WHERE organization = 'globex'`);
    db.close();
    const gone = await run(["audit", "verify", "--data-dir", dir]);
    expect(gone.stdout).toMatch(/^globex: BROKEN: the organization exists but has no trail \(its events and head were deleted, or it was created before runplane recorded organizations and has had no recorded change since\)$/m);
    expect(gone.code).toBe(1);
    const malformed = await run(["audit", "verify", "--organization", "acme", "--expect-head", "abc", "--data-dir", dir]);
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toMatch(/--expect-head takes a head digest \(64 hex characters\)/);
  }, 60_000);
});

// Under CI a missing database fails (postgresReachable), never skips.
const reachable = await postgresReachable("runplane audit verify on PostgreSQL");
describe.skipIf(!reachable)("runplane audit verify on PostgreSQL", () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  pool.on("error", () => undefined);
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  it.each(TAMPERING)("passes an intact chain, then catches %s (exit 1)", async (_what, tamper, message) => {
    const schema = uniqueSchema("auditverify");
    schemas.push(schema);
    await seed(await createPostgresStorage(pool, { schema }));
    const env = { DATABASE_URL, DATABASE_SCHEMA: schema };
    const dir = made();
    const intact = await run(["audit", "verify", "--data-dir", dir], env);
    expect(intact.stderr).toBe("");
    expect(intact.stdout).toMatch(/^acme: 3 events verified, head [0-9a-f]{64}\n/);
    await pool.query(tamper(`"${schema}".`));
    const broken = await run(["audit", "verify", "--data-dir", dir], env);
    expect(broken.stdout).toMatch(message);
    expect(broken.code).toBe(1);
    const other = await run(["audit", "verify", "--organization", "globex", "--data-dir", dir], env);
    expect([other.code, other.stdout]).toStrictEqual([0, expect.stringMatching(/^globex: 1 event verified, head [0-9a-f]{64}\n$/)]);
    expect(existsSync(join(dir, "keyring.json"))).toBe(false);
  }, 60_000);

  it("needs no data directory and no keyring: only the database (found from outside)", async () => {
    const schema = uniqueSchema("auditverify");
    schemas.push(schema);
    await seed(await createPostgresStorage(pool, { schema }));
    const nowhere = join(made(), "no-such-dir");
    const verified = await run(["audit", "verify", "--data-dir", nowhere], { DATABASE_URL, DATABASE_SCHEMA: schema });
    expect([verified.code, verified.stderr]).toStrictEqual([0, ""]);
    expect(verified.stdout).toMatch(/^acme: 3 events verified, head [0-9a-f]{64}\n/);
    expect(existsSync(nowhere)).toBe(false);
  }, 60_000);
});
