import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { PgPoolClientLike, PgPoolLike, PgQueryConfig } from "../../adapters/postgres/driver.js";
import { PostgresStorageError } from "../../adapters/postgres/driver.js";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { isStorageUnavailableError } from "../../src/storage/unavailable.js";
import { apiToken, variable, WS, WS2 } from "../../src/testing/conformance/fixtures.js";
import { teamProject } from "../../src/testing/conformance/team-projects.cases.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { startTcpProxy, throughProxy } from "../helpers/tcp-proxy.js";

/** A pool that counts statements by the first words that tell them apart. */
function countingPool() {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on("error", () => undefined);
  const seen: string[] = [];
  const wrapped: PgPoolLike = {
    query(config: PgQueryConfig) {
      seen.push(config.text);
      return pool.query(config);
    },
    // The adapter runs its statements on clients it checks out (decision D39): those count too.
    connect: async () => recording(await pool.connect(), (config) => (seen.push(config.text), undefined)),
    on: (event, listener) => pool.on(event, listener),
    removeListener: (event, listener) => pool.removeListener(event, listener),
    end: () => pool.end(),
  };
  const count = (pattern: RegExp) => seen.filter((text) => pattern.test(text)).length;
  return { pool, wrapped, seen, count };
}

/**
 * `client` with its statements shown to `observe` first: a rejection it returns is the
 * statement's answer instead. The client stays its prototype, cancel key included.
 */
function recording(client: PgPoolClientLike, observe: (config: PgQueryConfig) => Promise<never> | undefined): PgPoolClientLike {
  const observed: PgPoolClientLike = Object.create(client);
  observed.query = (config: PgQueryConfig) => observe(config) ?? client.query(config);
  return observed;
}

const vid = (n: number): string => `var-${String(n).padStart(16, "0")}`;

// What every API write asks for (its credential, its grants, its one row) is one
// statement per event-loop turn for all the requests of the turn, each answered as if alone.
if (await postgresReachable("postgres request groups")) {
  describe("postgres adapter: the reads and variable writes of one turn", () => {
    const schema = uniqueSchema("groups");
    const { pool, wrapped, seen, count } = countingPool();
    afterAll(async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });
    const storage = createPostgresStorage(wrapped, { schema });

    it("inserts share one statement; a taken key is a duplicate and a taken id fails, each alone", async () => {
      const s = await storage;
      seen.length = 0;
      const first = await Promise.all([s.variables.insert(variable({ id: vid(1), key: "stored" })), s.variables.insert(variable({ id: vid(6), key: "x" }, WS2))]);
      expect(first).toStrictEqual([{ ok: true }, { ok: true }]);
      expect(count(/^INSERT INTO \S+variables/)).toBe(1);
      await s.variables.delete(WS2, vid(6));
      const outcomes = await Promise.allSettled([
        s.variables.insert(variable({ id: vid(2), key: "a" })),
        s.variables.insert(variable({ id: vid(3), key: "stored" })),
        s.variables.insert(variable({ id: vid(1), key: "fresh" })),
        s.variables.insert(variable({ id: vid(4), key: "b" }, WS2)),
        s.variables.insert(variable({ id: vid(5), key: "a" })),
      ]);
      const [a, stored, takenId, b, sameTurn] = outcomes;
      expect(a).toStrictEqual({ status: "fulfilled", value: { ok: true } });
      expect(stored).toStrictEqual({ status: "fulfilled", value: { ok: false, reason: "duplicate-key" } });
      expect(takenId.status).toBe("rejected");
      expect(b).toStrictEqual({ status: "fulfilled", value: { ok: true } });
      expect(sameTurn).toStrictEqual({ status: "fulfilled", value: { ok: false, reason: "duplicate-key" } });
      expect((await s.variables.list(WS)).items.map((v) => v.key)).toStrictEqual(["stored", "a"]);
      expect((await s.variables.list(WS2)).items.map((v) => v.id)).toStrictEqual([vid(4)]);
    });

    it("deletes share one statement and each says whether its row was there", async () => {
      const s = await storage;
      await s.variables.insert(variable({ id: vid(10), key: "gone" }));
      seen.length = 0;
      const deleted = await Promise.all([
        s.variables.delete(WS, vid(10)),
        s.variables.delete(WS, "var-unknown"),
        s.variables.delete(WS2, vid(2)), // another owner's id
        s.variables.delete(WS2, vid(4)),
      ]);
      expect(deleted).toStrictEqual([true, false, false, true]);
      expect(count(/^DELETE FROM \S+variables v USING/)).toBe(1);
      expect(await s.variables.get(WS, vid(2))).not.toBeNull();
    });

    it("credential and grant lookups share one statement each, with each caller's own rows", async () => {
      const s = await storage;
      const tokens = [apiToken({ id: "at-1", digest: "d1" }), apiToken({ id: "at-2", digest: "d2" })];
      for (const t of tokens) await s.apiTokens.insert(t);
      const grants = [
        teamProject({ id: "tprj-1", teamId: "team-1", projectId: "prj-1" }),
        teamProject({ id: "tprj-2", teamId: "team-2", projectId: "prj-1" }),
        teamProject({ id: "tprj-3", teamId: "team-1", projectId: "prj-2" }),
      ];
      for (const g of grants) await s.teamProjects.insert(g);
      seen.length = 0;
      const [found, missing, second, both, one, other] = await Promise.all([
        s.apiTokens.findByDigest("d1"),
        s.apiTokens.findByDigest("d-unknown"),
        s.apiTokens.findByDigest("d2"),
        s.teamProjects.listForTeams("prj-1", ["team-1", "team-2"]),
        s.teamProjects.listForTeams("prj-1", ["team-2"]),
        s.teamProjects.listForTeams("prj-2", ["team-1", "team-2"]),
      ]);
      expect([found, missing, second]).toStrictEqual([tokens[0], null, tokens[1]]);
      expect([both, one, other]).toStrictEqual([[grants[0], grants[1]], [grants[1]], [grants[2]]]);
      expect(count(/FROM \S+api_tokens WHERE digest/)).toBe(1);
      expect(count(/FROM unnest\(\$1::text\[\]\) AS k\(key\)/)).toBe(1);
    });

    // A review found one request's NUL (`/workspaces/%00/vars`, before authentication) failing
    // every read of its event-loop turn with PostgreSQL's 22021, as a 500 to each other request.
    it("a key PostgreSQL refuses fails no other read of its turn", async () => {
      const s = await storage;
      const inTurn = <T>(read: () => Promise<T>) => new Promise<T>((resolve, reject) => setImmediate(() => read().then(resolve, reject)));
      const outcomes = await Promise.allSettled([
        inTurn(() => s.revisions!.read(["directory"])),
        inTurn(() => s.revisions!.read(["directory", "vars:workspace:\u0000"])),
        inTurn(() => s.apiTokens.findByDigest("d1")),
        inTurn(() => s.apiTokens.findByDigest("d\u0000")),
        inTurn(() => s.workspaces.get("x\u0000")),
      ]);
      expect(outcomes.map((o) => o.status)).toStrictEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
      expect(outcomes.slice(2).map((o) => (o as PromiseFulfilledResult<unknown>).value)).toStrictEqual([expect.objectContaining({ id: "at-1" }), null, null]);
      expect((outcomes[1] as PromiseFulfilledResult<number[]>).value[1]).toBe(0);
    });

    // NUL is dropped before any SQL only when it is in the key itself: a grant lookup's key is the
    // JSON of its call, where a NUL project id is the escape \u0000, which reaches PostgreSQL and
    // fails the whole grouped statement (22P05) when it is cast to text.
    it("a key that fails the grouped statement fails alone: the other reads of its turn get their rows", async () => {
      const s = await storage;
      const grants = [
        teamProject({ id: "tprj-40", teamId: "team-1", projectId: "prj-40" }),
        teamProject({ id: "tprj-41", teamId: "team-2", projectId: "prj-41" }),
      ];
      for (const g of grants) await s.teamProjects.insert(g);
      seen.length = 0;
      const [first, refused, second] = await Promise.allSettled([
        s.teamProjects.listForTeams("prj-40", ["team-1"]),
        s.teamProjects.listForTeams("prj-\u0000", ["team-1"]),
        s.teamProjects.listForTeams("prj-41", ["team-1", "team-2"]),
      ]);
      expect(first).toStrictEqual({ status: "fulfilled", value: [grants[0]] });
      expect(second).toStrictEqual({ status: "fulfilled", value: [grants[1]] });
      expect(refused.status).toBe("rejected");
      expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(PostgresStorageError);
      // The three shared one statement first: the grouping holds for keys PostgreSQL accepts.
      expect(seen[0]).toMatch(/FROM unnest\(\$1::text\[\]\) AS k\(key\)/);
    });

    it("stores a lone surrogate as U+FFFD, as a lone statement did, beside other writes of its turn", async () => {
      const s = await storage;
      const written = await Promise.all([s.variables.insert(variable({ id: vid(20), key: "odd", value: "a\ud800" })), s.variables.insert(variable({ id: vid(21), key: "even" }))]);
      expect(written).toStrictEqual([{ ok: true }, { ok: true }]);
      expect((await s.variables.get(WS, vid(20)))?.value).toBe("a\ufffd");
    });
  });

  describe("postgres adapter: a grouped read while the database is away", () => {
    const schema = uniqueSchema("readsdown");
    const { pool, wrapped } = countingPool();
    /** A pool whose server is gone: every connection it opens is refused. */
    let gone: pg.Pool | undefined;
    afterAll(async () => {
      await gone?.end();
      await dropSchema(pool, schema);
      await pool.end();
    });

    it("tries one statement for all its keys, not one more per key, and fails every caller as unavailable", async () => {
      const target = new URL(DATABASE_URL);
      const closed = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      await closed.close();
      gone = new pg.Pool({ connectionString: throughProxy(DATABASE_URL, closed), max: 4 });
      gone.on("error", () => undefined);
      // The storage is created while the database answers; then its statements go to the closed port.
      const whileAway: string[] = [];
      let away = false;
      const switching: PgPoolLike = {
        ...wrapped,
        query: (config) => (away ? (whileAway.push(config.text), gone!.query(config)) : wrapped.query(config)),
        // Each statement checks out its own connection (decision D39): one attempt is one statement.
        connect: () => (away ? (whileAway.push("connect"), gone!.connect()) : wrapped.connect()),
      };
      const s = await createPostgresStorage(switching, { schema });
      away = true;
      const outcomes = await Promise.allSettled(["d1", "d2", "d3", "d4"].map((digest) => s.apiTokens.findByDigest(digest)));
      expect(outcomes.map((o) => o.status === "rejected" && isStorageUnavailableError(o.reason))).toStrictEqual([true, true, true, true]);
      expect(whileAway).toStrictEqual(["connect"]);
    });
  });

  describe("postgres adapter: a variable write group while the database is away", () => {
    const schema = uniqueSchema("groupsdown");
    const { pool, wrapped, seen } = countingPool();
    let away = false;
    const failing: PgPoolLike = {
      ...wrapped,
      query(config: PgQueryConfig) {
        if (away && /^INSERT INTO \S+variables/.test(config.text)) return (seen.push(config.text), Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })));
        return wrapped.query(config);
      },
      connect: async () =>
        recording(await pool.connect(), (config) => {
          if (!/^INSERT INTO \S+variables/.test(config.text)) return undefined;
          seen.push(config.text);
          return away ? Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })) : undefined;
        }),
    };
    afterAll(async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });

    it("fails every write at once, not row by row", async () => {
      const s = await createPostgresStorage(failing, { schema });
      away = true;
      seen.length = 0;
      const outcomes = await Promise.allSettled([1, 2, 3].map((n) => s.variables.insert(variable({ id: vid(30 + n), key: `k${n}` }))));
      expect(outcomes.map((o) => o.status)).toStrictEqual(["rejected", "rejected", "rejected"]);
      expect(seen.filter((text) => /^INSERT INTO \S+variables/.test(text))).toHaveLength(1);
    });
  });
}
