import type { VarOwner } from "../../src/schemas/records.js";
import type { GuardedResult, VariableStore } from "../../src/storage/types.js";
import { fromVariableRow, toVariableRow, VARIABLES, type VariableRow } from "../sql/rows.js";
import { columnList } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, isViolation, rowsOf, sql } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import { createVariableWrites } from "./variable-writes.js";

const COLUMNS = columnList(VARIABLES);
const OWNER = `owner_kind = @owner_kind AND owner_id = @owner_id`;

/**
 * Compare-and-set with its diagnosis in one statement: `found` reads the statement's snapshot
 * (taken before the UPDATE), so a refused update tells `stale` from `missing` without a second
 * round trip.
 */
const casSql = (q: string) => `WITH updated AS (
    UPDATE ${q}variables SET key = @key, value = @value, description = @description, category = @category,
      hcl = @hcl, sensitive = @sensitive, version_id = @version_id, created_at = @created_at, updated_at = @updated_at
    WHERE id = @id AND ${OWNER} AND version_id = @expected_version_id
    RETURNING 1)
  SELECT EXISTS (SELECT 1 FROM updated) AS updated,
    EXISTS (SELECT 1 FROM ${q}variables WHERE id = @id AND ${OWNER}) AS found`;

type UpdateResult = GuardedResult<"missing" | "stale" | "duplicate-key">;

export function createVariableStore(pool: PgPoolLike, q: string): VariableStore {
  const s = {
    all: sql(`SELECT ${COLUMNS} FROM ${q}variables WHERE ${OWNER} ORDER BY created_at, id`),
    page: sql(pageOf(`${q}variables`, COLUMNS, OWNER, "created_at, id")),
    get: sql(`SELECT ${COLUMNS} FROM ${q}variables WHERE id = @id AND ${OWNER}`),
    update: sql(casSql(q)),
    deleteByOwner: sql(`DELETE FROM ${q}variables WHERE ${OWNER}`),
  };
  const owned = (owner: VarOwner) => ({ owner_kind: owner.kind, owner_id: owner.id });
  const writes = createVariableWrites(pool, q);

  return {
    async list(owner, request) {
      if (request) return pageFrom(await rowsOf<PagedRow<VariableRow>>(pool, s.page, { ...owned(owner), ...request }), fromVariableRow);
      const items = (await rowsOf<VariableRow>(pool, s.all, owned(owner))).map(fromVariableRow);
      return { items, total: items.length };
    },
    async get(owner, id) {
      const [row] = await rowsOf<VariableRow>(pool, s.get, { id, ...owned(owner) });
      return row ? fromVariableRow(row) : null;
    },
    // The (owner, key, category) index is the guard; a reused id (the primary key) propagates.
    insert: async (record) => ((await writes.insert(record)) ? { ok: true } : { ok: false, reason: "duplicate-key" }),
    async update(record, expectedVersionId): Promise<UpdateResult> {
      try {
        const [row] = await rowsOf<{ updated: boolean; found: boolean }>(pool, s.update, {
          ...toVariableRow(record),
          expected_version_id: expectedVersionId,
        });
        if (row?.updated) return { ok: true };
        return { ok: false, reason: row?.found ? "stale" : "missing" };
      } catch (error) {
        if (isViolation(error, "variables_unique_key")) return { ok: false, reason: "duplicate-key" };
        throw error;
      }
    },
    delete: (owner, id) => writes.delete(owner, id),
    deleteByOwner: async (owner) => changed(pool, s.deleteByOwner, owned(owner)),
  };
}
