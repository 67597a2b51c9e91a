import Database from "better-sqlite3";
import pg from "pg";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { SQL_SEALED_COLUMNS } from "../../adapters/sql/sealed-columns.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { createDispatcher, createRunplane, generateKey, silentLogger } from "../../src/index.js";
import type { Storage } from "../../src/storage/types.js";
import { answering200 } from "../helpers/app.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";

// Decision D29: the list of sealed columns (adapters/sql/sealed-columns.ts) is checked against each
// schema as it is: every column of every table is read after a run that stores every kind of
// sealed value, and the columns found holding one must be exactly the list. A sealed column added
// later and not listed (so `reencrypt` would skip it, as it skipped task_delivery_payloads) fails.

const LISTED = Object.values(SQL_SEALED_COLUMNS).map((c) => `${c.table}.${c.column}`).sort();
const SEALED = "%rpv1:%";

/** Stores one of each: sensitive variable and parameter, HMAC key, and a delivered request's payload. */
async function storeEveryKind(storage: Storage): Promise<void> {
  const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k1", key: generateKey() }] }, transport: answering200() });
  const d = runplane.directory;
  await d.organizations.create({ name: "o" });
  await d.projects.create({ id: "prj-1", name: "p", organization: "o" });
  await d.workspaces.create({ id: "ws-1", name: "w", organization: "o", projectId: "prj-1" });
  await d.policySets.create({ id: "polset-1", name: "ps", organization: "o" });
  await runplane.variables.create("ws-1", { key: "secret", value: "v", category: "env", sensitive: true });
  await runplane.policySetParameters.create("polset-1", { key: "secret", value: "v", category: "policy-set", sensitive: true });
  const task = await runplane.runTasks.tasks.create("o", { name: "scan", url: "https://scanner.example/hook", "hmac-key": "task-secret" });
  await runplane.runTasks.workspaceTasks.create("ws-1", task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
  const { run } = await runplane.runTasks.createRun({ workspaceId: "ws-1", configurationVersionId: "cv-1" });
  await runplane.runTasks.startStage(run.id, "post_plan");
  expect((await createDispatcher(runplane, { owner: "t" }).tick()).delivered).toBe(1);
}

/** `table.column` of every column that holds a value starting like a sealed one, given the schema's columns. */
async function sealedColumnsOf(columns: { table: string; column: string }[], count: (table: string, column: string) => Promise<number>) {
  const found: string[] = [];
  for (const { table, column } of columns) if ((await count(table, column)) > 0) found.push(`${table}.${column}`);
  return found.sort();
}

describe("sealed columns (D29): the list is the schema's", () => {
  it("SQLite: the columns holding sealed values are exactly SQL_SEALED_COLUMNS", async () => {
    const db = new Database(":memory:");
    const storage = createSqliteStorage(db);
    await storeEveryKind(storage);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
    const columns = tables.flatMap((table) => (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((c) => ({ table, column: c.name })));
    const count = async (table: string, column: string) =>
      (db.prepare(`SELECT count(*) AS n FROM "${table}" WHERE CAST("${column}" AS TEXT) LIKE ?`).get(SEALED) as { n: number }).n;
    expect(await sealedColumnsOf(columns, count)).toStrictEqual(LISTED);
    await storage.close();
  });

  it("the core seals only through sealedBinding, so every sealed value has a name in SEALED_COLUMNS", () => {
    const root = fileURLToPath(new URL("../../src/", import.meta.url));
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : name.endsWith(".ts") ? [join(dir, name)] : []));
    for (const file of files(root)) {
      const text = readFileSync(file, "utf8");
      if (!file.endsWith("services/sealing.ts") && !file.endsWith("crypto/keyring.ts")) expect(text, file).not.toMatch(/rowBinding\(/);
      for (const line of text.split("\n").filter((l) => /\.seal\(/.test(l))) expect(line, file).toMatch(/(sealedBinding|[bB]inding)\(/);
    }
  });
});

const reachable = await postgresReachable("sealed columns");

describe.skipIf(!reachable)("sealed columns (D29) on PostgreSQL", () => {
  const schema = uniqueSchema("sealed");
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  admin.on("error", () => undefined);
  afterAll(async () => {
    await dropSchema(admin, schema);
    await admin.end();
  });

  it("the columns holding sealed values are exactly SQL_SEALED_COLUMNS", async () => {
    const storage = await createPostgresStorage(admin, { schema });
    await storeEveryKind(storage);
    const { rows } = await admin.query<{ table: string; column: string }>(
      `SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns WHERE table_schema = $1`,
      [schema],
    );
    const count = async (table: string, column: string) =>
      Number((await admin.query(`SELECT count(*) AS n FROM "${schema}"."${table}" WHERE "${column}"::text LIKE $1`, [SEALED])).rows[0].n);
    expect(await sealedColumnsOf(rows, count)).toStrictEqual(LISTED);
    await storage.close();
  });
});
