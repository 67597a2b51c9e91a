import type { Page, PageRequest, VariableRecord, VarOwner } from "../../src/schemas/records.js";
import type { GuardedResult, VariableStore } from "../../src/storage/types.js";
import { fromVariableRow, toVariableRow, VARIABLES, type VariableRow } from "../sql/rows.js";
import { insertSql } from "../sql/statements.js";
import type { SqliteDatabase } from "./driver.js";
import { deferredTx, groupedTx, isUniqueViolation } from "./driver.js";

const OWNER = `owner_kind = ? AND owner_id = ?`;

/** The statements, exported so the adapter tests can check their query plans. */
export const VARIABLE_SQL = {
  all: `SELECT * FROM variables WHERE ${OWNER} ORDER BY created_at, id`,
  page: `SELECT * FROM variables WHERE ${OWNER} ORDER BY created_at, id LIMIT ? OFFSET ?`,
  count: `SELECT COUNT(*) AS total FROM variables WHERE ${OWNER}`,
  get: `SELECT * FROM variables WHERE id = ? AND ${OWNER}`,
  versionOf: `SELECT version_id FROM variables WHERE id = ? AND ${OWNER}`,
  insert: insertSql(VARIABLES),
  // Compare-and-set: the row changes only while it still carries the version the caller read.
  update: `UPDATE variables SET key = @key, value = @value, description = @description, category = @category,
      hcl = @hcl, sensitive = @sensitive, version_id = @version_id, created_at = @created_at, updated_at = @updated_at
    WHERE id = @id AND owner_kind = @owner_kind AND owner_id = @owner_id AND version_id = @expected_version_id`,
  delete: `DELETE FROM variables WHERE id = ? AND ${OWNER}`,
  deleteByOwner: `DELETE FROM variables WHERE ${OWNER}`,
} as const;

type UpdateResult = GuardedResult<"missing" | "stale" | "duplicate-key">;

export function createVariableStore(db: SqliteDatabase): VariableStore {
  const s = Object.fromEntries(
    Object.entries(VARIABLE_SQL).map(([name, sql]) => [name, db.prepare(sql)]),
  ) as Record<keyof typeof VARIABLE_SQL, ReturnType<SqliteDatabase["prepare"]>>;
  const records = (list: unknown[]): VariableRecord[] => (list as VariableRow[]).map(fromVariableRow);

  const page = deferredTx(db, (owner: VarOwner, request: PageRequest): Page<VariableRecord> => ({
    items: records(s.page.all(owner.kind, owner.id, request.limit, request.offset)),
    total: (s.count.get(owner.kind, owner.id) as { total: number }).total,
  }));
  // Variable writes commit in groups (driver.ts): under synchronous=FULL a write costs its fsync,
  // and API clients writing at once then share one.
  const insert = groupedTx(db, (record: VariableRecord) => {
    s.insert.run(toVariableRow(record));
  });
  const update = groupedTx(db, (record: VariableRecord, expectedVersionId: string): UpdateResult => {
    const row = { ...toVariableRow(record), expected_version_id: expectedVersionId };
    if (s.update.run(row).changes === 1) return { ok: true };
    const current = s.versionOf.get(record.id, record.ownerKind, record.ownerId);
    return { ok: false, reason: current ? "stale" : "missing" };
  });
  const remove = groupedTx(db, (owner: VarOwner, id: string) => s.delete.run(id, owner.kind, owner.id).changes === 1);
  const removeByOwner = groupedTx(db, (owner: VarOwner) => s.deleteByOwner.run(owner.kind, owner.id).changes);

  // A UNIQUE violation rolls the call's savepoint back before it reaches us; it becomes the guard's
  // answer. Other errors (a PRIMARY KEY clash included) propagate: SQLite names columns, not values.
  const guarded = async <R>(write: () => Promise<R>, onDuplicate: R): Promise<R> => {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) return onDuplicate;
      throw error;
    }
  };

  return {
    async list(owner, request) {
      if (request) return page(owner, request);
      const items = records(s.all.all(owner.kind, owner.id));
      return { items, total: items.length };
    },
    async get(owner, id) {
      const row = s.get.get(id, owner.kind, owner.id);
      return row ? fromVariableRow(row as VariableRow) : null;
    },
    async insert(record) {
      return guarded<GuardedResult<"duplicate-key">>(async () => {
        await insert(record);
        return { ok: true };
      }, { ok: false, reason: "duplicate-key" });
    },
    async update(record, expectedVersionId) {
      return guarded(() => update(record, expectedVersionId), { ok: false, reason: "duplicate-key" });
    },
    delete: async (owner, id) => remove(owner, id),
    deleteByOwner: async (owner) => removeByOwner(owner),
  };
}
