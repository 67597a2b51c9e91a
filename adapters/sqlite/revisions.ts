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

/**
 * decision D60: whether anything may have been committed since the last call (true on the first).
 * `PRAGMA data_version` moves when another connection commits (another process, the writer thread,
 * another storage on the file) and `total_changes()` when this one writes, the host's own SQL and
 * the counters' triggers included. Both are per connection and read no table: about 4 µs here,
 * against 8-11 µs for reading the counters themselves.
 */
function changeSignal(db: SqliteDatabase): () => boolean {
  const version = db.prepare("PRAGMA data_version");
  const changes = db.prepare("SELECT total_changes() AS n");
  let lastVersion = -1;
  let lastChanges = -1;
  return () => {
    const v = (version.get() as { data_version: number }).data_version;
    const c = (changes.get() as { n: number }).n;
    if (v === lastVersion && c === lastChanges) return false;
    lastVersion = v;
    lastChanges = c;
    return true;
  };
}

/** Counters remembered between changes: bounded, a workspace's scope is small but there may be many. */
const MAX_KNOWN_SCOPES = 4096;

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
  const changed = changeSignal(db);
  // Counters read since the signal last moved. The signal is read before the counters, so a commit
  // landing between the two leaves counters at least as new as the signal says, and the next call
  // sees the signal move: an answer is never older than the commits before its call.
  let known = new Map<string, number>();
  return {
    async read(scopes) {
      if (scopes.length === 0) return [];
      if (changed() || known.size > MAX_KNOWN_SCOPES) known = new Map();
      const missing = [...new Set(scopes.filter((scope) => !known.has(scope)))];
      if (missing.length > 0) {
        const row = statementFor(missing.length).get(...missing) as Record<string, number | null>;
        missing.forEach((scope, i) => known.set(scope, row[`r${i}`] ?? 0));
      }
      return scopes.map((scope) => known.get(scope)!);
    },
  };
}
