/**
 * The shape both SQL adapters give their schema: an append-only list of named steps, applied in
 * order, each in its own transaction together with the recorded version, so a database at version
 * N has run exactly the first N. What `up` holds is the adapter's own (SQLite: SQL text or a
 * function over the connection; PostgreSQL: SQL written against a schema prefix).
 */
export interface SqlMigration<Up> {
  readonly name: string;
  readonly up: Up;
}

/**
 * Refuses a database that a newer runplane migrated further than `known` steps, rather than
 * guessing what its tables mean.
 */
export function assertKnownVersion(adapter: "sqlite" | "postgres", current: number, known: number): void {
  if (current > known) {
    throw new Error(
      `runplane ${adapter}: database schema is version ${current}, this runplane knows ${known}: upgrade runplane ` +
        "(the database is newer than this release supports)",
    );
  }
}

/** The error of a step that failed (its transaction was rolled back), with the database's as cause. */
export const migrationFailed = (adapter: "sqlite" | "postgres", migration: SqlMigration<unknown>, cause: unknown): Error =>
  new Error(`runplane ${adapter}: migration ${migration.name} failed and was rolled back`, { cause });
