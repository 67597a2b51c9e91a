import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import type { Storage } from "../../src/storage/types.js";

export interface StorageSetup {
  name: string;
  create(): { storage: Storage; dispose(): void; file?: string };
}

/** Tempdir SQLite file; `dispose` removes the directory. */
export function sqliteFileSetup(): { storage: Storage; dispose(): void; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "runplane-"));
  const file = join(dir, "runplane.db");
  const db = new Database(file);
  const storage = createSqliteStorage(db);
  return {
    storage,
    file,
    dispose() {
      if (db.open) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The adapters every HTTP suite runs against. */
export const STORAGES: StorageSetup[] = [
  { name: "memory", create: () => ({ storage: createMemoryStorage(), dispose() {} }) },
  { name: "sqlite", create: sqliteFileSetup },
];
