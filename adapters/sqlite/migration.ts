import type { SqlMigration } from "../sql/migrations.js";
import type { SqliteDatabase } from "./driver.js";

/**
 * One schema step. `up` is SQL run with `exec` (several statements are fine) or a function for a
 * data migration. It runs inside BEGIN IMMEDIATE together with the `user_version` bump, so a step
 * is applied completely or not at all. Inside a transaction `PRAGMA foreign_keys` is a no-op: a step
 * that rebuilds a referenced table uses `PRAGMA defer_foreign_keys = ON` instead.
 */
export type Migration = SqlMigration<string | ((db: SqliteDatabase) => void)>;
