import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, varsBody, type TestApp } from "../helpers/app.js";
import { DATABASE_URL, postgresReachable } from "../helpers/postgres.js";
import { proxiedPostgres, type ProxiedPostgres } from "../helpers/proxied-postgres.js";

// Decision D28 and D64, found from outside: the connection is cut right after the server answered
// a variable creation's row statement (the proxy drops that answer and the connection). The
// write runs inside a transaction whose COMMIT was never sent, so the server rolls it back: the
// 503 runplane answers is true, and the retry it invites creates the variable (201, not 422).

const reachable = await postgresReachable("postgres cut mid write");

describe.skipIf(!reachable)("a variable creation whose statement's answer is cut off (D28, D64)", () => {
  let db: ProxiedPostgres;
  let app: TestApp;
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });

  beforeAll(async () => {
    db = await proxiedPostgres("cutwrite", { max: 4 });
    app = await createTestApp({ storage: db.storage });
  });
  afterAll(async () => {
    await db?.close(() => app?.runplane.close());
    await admin.end();
  });

  it("is answered 503 and not applied, with no event; sent again, it is created once", async () => {
    const count = async (table: string, where: string): Promise<number> =>
      Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`)).rows[0]!.n);
    // The storage's schema (rp_cutwrite_<pid>_<random>, test/helpers/postgres.ts).
    const [found] = (await admin.query<{ s: string }>(`SELECT table_schema AS s FROM information_schema.tables WHERE table_name = 'variables' AND table_schema LIKE $1`, [`rp_cutwrite_${process.pid}_%`])).rows;
    const variables = `"${found!.s}".variables`;
    const events = variables.replace(/variables$/, "audit_events");
    // The row statement's answer carries the new variable's id: the first "var-" the server sends.
    const cut = db.proxy.cutAfter("var-");
    const first = await app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: varsBody({ key: "cut_once", value: "v", category: "env" }) });
    await cut;
    expect(first.status, first.text).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await count(variables, "key = 'cut_once'")).toBe(0);
    expect(await count(events, "body LIKE '%cut_once%'")).toBe(0);
    const again = await app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: varsBody({ key: "cut_once", value: "v", category: "env" }) });
    expect(again.status, again.text).toBe(201);
    expect(await count(variables, "key = 'cut_once'")).toBe(1);
    expect(await count(events, "body LIKE '%cut_once%'")).toBe(1);
  });
});
