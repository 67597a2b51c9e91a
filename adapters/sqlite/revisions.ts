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

/** Scopes per counter statement: one prepared statement per count up to this. */
const SCOPES_PER_STATEMENT = 32;

interface Waiting {
  scopes: readonly string[];
  resolve: (counters: number[]) => void;
  reject: (error: unknown) => void;
}

/**
 * decision D60: the reads asked in one event-loop turn share one statement, run once that turn's
 * requests have all asked (`schedule`, `setImmediate` by default, as PostgreSQL's read group), so
 * each still sees every commit made before it asked: another process's, the writer thread's, this
 * connection's. The turn's cached answers then leave together instead of one per turn.
 */
export function createRevisionStore(db: SqliteDatabase, schedule: (flush: () => void) => unknown = setImmediate): RevisionStore {
  // One statement per scope count, each scalar subquery a primary-key lookup.
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
  const counters = (scopes: readonly string[]): Map<string, number> => {
    const unique = [...new Set(scopes)];
    const read = new Map<string, number>();
    for (let at = 0; at < unique.length; at += SCOPES_PER_STATEMENT) {
      const chunk = unique.slice(at, at + SCOPES_PER_STATEMENT);
      const row = statementFor(chunk.length).get(...chunk) as Record<string, number | null>;
      chunk.forEach((scope, i) => read.set(scope, row[`r${i}`] ?? 0));
    }
    return read;
  };
  let waiting: Waiting[] = [];
  const flush = (): void => {
    const batch = waiting;
    waiting = [];
    let read: Map<string, number>;
    try {
      read = counters(batch.flatMap((w) => w.scopes));
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    for (const w of batch) w.resolve(w.scopes.map((scope) => read.get(scope)!));
  };
  return {
    read(scopes) {
      if (scopes.length === 0) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        if (waiting.length === 0) schedule(flush);
        waiting.push({ scopes, resolve, reject });
      });
    },
  };
}
