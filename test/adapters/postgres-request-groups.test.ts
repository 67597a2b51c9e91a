import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { PgPoolLike, PgQueryConfig } from "../../adapters/postgres/driver.js";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { apiToken } from "../../src/testing/conformance/fixtures.js";
import { teamProject } from "../../src/testing/conformance/team-projects.cases.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";

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
    connect: () => pool.connect(),
    on: (event, listener) => pool.on(event, listener),
    removeListener: (event, listener) => pool.removeListener(event, listener),
    end: () => pool.end(),
  };
  const count = (pattern: RegExp) => seen.filter((text) => pattern.test(text)).length;
  return { pool, wrapped, seen, count };
}

// Issue 28: what every API request reads to authorize (its credential, its grants) is one
// statement per event-loop turn for all the requests of the turn, each answered as if alone.
if (await postgresReachable("postgres request groups")) {
  describe("postgres adapter: the reads of one turn", () => {
    const schema = uniqueSchema("groups");
    const { pool, wrapped, seen, count } = countingPool();
    afterAll(async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });
    const storage = createPostgresStorage(wrapped, { schema });

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
  });
}
