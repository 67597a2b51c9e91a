import type { SqlMigration } from "../sql/migrations.js";

/**
 * One schema step: DDL (several statements are fine) written against `q`, the quoted schema
 * prefix (`"runplane".`), so every name is qualified and a host's `search_path` never matters.
 */
export type PgMigration = SqlMigration<(q: string) => string>;
