import type { RevisionStore } from "../../src/storage/revisions.js";
import { API_TOKEN_DECISION_COLUMNS, DIRECTORY_TABLES, varsScopeOf } from "../sql/revisions.js";
import type { SqliteDatabase, SqliteStatement } from "./driver.js";
import type { Migration } from "./migration.js";

const bump = (scope: string) => `INSERT INTO revisions (scope, n) VALUES (${scope}, 1) ON CONFLICT (scope) DO UPDATE SET n = n + 1;`;
const trigger = (name: string, event: string, table: string, body: string) =>
  `CREATE TRIGGER ${name} AFTER ${event} ON ${table} BEGIN ${body} END;`;

const directory = bump("'directory'");
const varsOf = (row: "NEW" | "OLD") => bump(varsScopeOf(row));

/**
 * `RevisionStore` counters kept by triggers, so every write path (present and future, raw SQL
 * included) bumps its scope inside its own transaction without the stores having to remember to.
 */
export const REVISIONS_MIGRATION: Migration = {
  name: "0008-revisions",
  up: [
    `CREATE TABLE revisions (scope TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL) STRICT, WITHOUT ROWID;`,
    ...DIRECTORY_TABLES.flatMap((table) => [
      trigger(`${table}_revision_insert`, "INSERT", table, directory),
      trigger(`${table}_revision_update`, "UPDATE", table, directory),
      trigger(`${table}_revision_delete`, "DELETE", table, directory),
    ]),
    trigger("api_tokens_revision_insert", "INSERT", "api_tokens", directory),
    trigger("api_tokens_revision_update", `UPDATE OF ${API_TOKEN_DECISION_COLUMNS}`, "api_tokens", directory),
    trigger("api_tokens_revision_delete", "DELETE", "api_tokens", directory),
    trigger("variables_revision_insert", "INSERT", "variables", varsOf("NEW")),
    trigger("variables_revision_update", "UPDATE", "variables", `${varsOf("OLD")} ${varsOf("NEW")}`),
    trigger("variables_revision_delete", "DELETE", "variables", varsOf("OLD")),
  ].join("\n"),
};

export function createRevisionStore(db: SqliteDatabase): RevisionStore {
  // One statement per scope count, each scalar subquery a primary-key lookup: one round trip.
  const statements = new Map<number, SqliteStatement>();
  const statementFor = (count: number): SqliteStatement => {
    let statement = statements.get(count);
    if (!statement) {
      const columns = Array.from({ length: count }, (_, i) => `(SELECT n FROM revisions WHERE scope = ?) AS r${i}`);
      statement = db.prepare(`SELECT ${columns.join(", ")}`);
      statements.set(count, statement);
    }
    return statement;
  };
  return {
    async read(scopes) {
      if (scopes.length === 0) return [];
      const row = statementFor(scopes.length).get(...scopes) as Record<string, number | null>;
      return scopes.map((_, i) => row[`r${i}`] ?? 0);
    },
  };
}
