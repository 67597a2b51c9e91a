import type { RevisionStore } from "../../src/storage/revisions.js";
import { API_TOKEN_DECISION_COLUMNS, DIRECTORY_TABLES, varsScopeOf } from "../sql/revisions.js";
import type { PgPoolLike } from "./driver.js";
import { sql } from "./driver.js";
import { createReadGroup } from "./read-group.js";
import type { PgMigration } from "./migration.js";
import { TEXT } from "./sql.js";

/**
 * Deferred constraint triggers: the bump runs at COMMIT, inside the writing transaction (never a
 * sequence: `nextval` is visible before commit, so a reader could see a counter ahead of the data),
 * and the hot counter row stays locked only for the commit itself, not for the whole transaction.
 */
const trigger = (q: string, table: string, events: string, fn: string) =>
  `CREATE CONSTRAINT TRIGGER ${table}_revision AFTER ${events} ON ${q}${table}
     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${q}${fn}();`;

const bump = (q: string, scope: string) =>
  `INSERT INTO ${q}revisions AS r (scope, n) VALUES (${scope}, 1) ON CONFLICT (scope) DO UPDATE SET n = r.n + 1;`;

/** `RevisionStore` counters, kept by triggers so every write path bumps its scope. */
export const REVISIONS_MIGRATION: PgMigration = {
  name: "0004-revisions",
  up: (q) => `
    -- integer, not bigint: node-postgres hands bigint back as a string.
    CREATE TABLE ${q}revisions (scope ${TEXT} PRIMARY KEY, n integer NOT NULL);

    CREATE FUNCTION ${q}runplane_bump_directory() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${bump(q, "'directory'")}
      RETURN NULL;
    END $$;

    CREATE FUNCTION ${q}runplane_bump_variables() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN ${bump(q, varsScopeOf("OLD"))} END IF;
      IF TG_OP <> 'DELETE' THEN ${bump(q, varsScopeOf("NEW"))} END IF;
      RETURN NULL;
    END $$;

    ${DIRECTORY_TABLES.map((table) => trigger(q, table, "INSERT OR UPDATE OR DELETE", "runplane_bump_directory")).join("\n")}
    ${trigger(q, "api_tokens", `INSERT OR DELETE OR UPDATE OF ${API_TOKEN_DECISION_COLUMNS}`, "runplane_bump_directory")}
    ${trigger(q, "variables", "INSERT OR UPDATE OR DELETE", "runplane_bump_variables")}
  `,
};

export function createRevisionStore(pool: PgPoolLike, q: string): RevisionStore {
  // Every cacheable GET reads its counters first, so under load this is one round trip per
  // request; the requests of one event-loop turn share one statement instead. Each
  // read still starts after its request asked for it, so it sees every write committed before.
  const counter = createReadGroup<{ scope: string; n: number }>(
    pool,
    sql(`SELECT scope, n FROM ${q}revisions WHERE scope = ANY(@keys::text[])`),
    (row) => row.scope,
    setImmediate,
  );
  return {
    read: (scopes) => Promise.all(scopes.map(async (scope) => (await counter(scope))[0]?.n ?? 0)),
  };
}
