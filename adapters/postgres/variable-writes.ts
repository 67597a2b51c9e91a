import type { VariableRecord, VarOwner } from "../../src/schemas/records.js";
import { toVariableRow, VARIABLES, type VariableRow } from "../sql/rows.js";
import { rowsOf, sql, type PgPoolLike } from "./driver.js";
import { insertManySql, qualified } from "./sql.js";
import { createWriteGroup } from "./write-group.js";
import { deadlineOf } from "./bounded-pool.js";
import { isStorageUnavailableError } from "../../src/storage/unavailable.js";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Writes one statement carries at most. */
const MAX_GROUP = 100;

type Owned = { id: string; owner_kind: string; owner_id: string };
const byOwner = (a: Owned, b: Owned): number =>
  a.owner_kind < b.owner_kind ? -1 : a.owner_kind > b.owner_kind ? 1 : a.owner_id < b.owner_id ? -1 : a.owner_id > b.owner_id ? 1 : 0;

/**
 * Runs the writes of one turn as one statement: every variable write bumps its owner's
 * revision counter at commit, under that row's lock, so lone statements from concurrent requests
 * queued on it one commit (WAL flush) at a time; a group takes the lock and flushes once. Rows go in
 * owner order, so two groups take the counter rows in one order. A statement that fails (a taken
 * id, a deadlock victim) is rolled back whole: then each write runs alone, so only the one at
 * fault fails, as when every write was its own statement.
 */
function grouped<Row extends Owned>(pool: PgPoolLike, write: (rows: Row[], at: number | undefined) => Promise<Set<string>>) {
  const group = createWriteGroup<Row, boolean | Error>(async (rows, at) => {
    const run = async (part: readonly Row[]) => {
      const stored = await write([...part].sort(byOwner), at);
      return part.map((r) => stored.has(r.id));
    };
    if (rows.length === 1) return run(rows);
    try {
      return await run(rows);
    } catch (error) {
      // An unreachable database fails every row alike: answer at once (D28), not row by row.
      if (isStorageUnavailableError(error)) throw error;
      const answers: (boolean | Error)[] = [];
      for (const row of rows) answers.push(await run([row]).then(([out]) => out!, toError));
      return answers;
    }
  }, MAX_GROUP, () => deadlineOf(pool));
  return async (row: Row): Promise<boolean> => {
    const out = await group(row.id, row);
    if (out instanceof Error) throw out;
    return out;
  };
}

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * `insert` and `delete` of `VariableStore`, grouped per turn. An insert whose (owner, key,
 * category) is taken is skipped by `ON CONFLICT` on that index only (a taken id still fails), so
 * a duplicate is told apart without failing the group.
 */
export function createVariableWrites(pool: PgPoolLike, q: string) {
  const insert = sql(`${insertManySql(qualified(q, VARIABLES))}
    ON CONFLICT (owner_kind, owner_id, key, category) DO NOTHING RETURNING id`);
  const remove = sql(`DELETE FROM ${q}variables v USING json_to_recordset(@rows::json) AS x(id text, owner_kind text, owner_id text)
    WHERE v.id = x.id AND v.owner_kind = x.owner_kind AND v.owner_id = x.owner_id RETURNING v.id`);
  // A lone surrogate is not JSON PostgreSQL accepts; a lone statement parameter stored it as U+FFFD.
  const json = (rows: object[]): string => JSON.stringify(rows, (_key, value: unknown) => (typeof value === "string" ? value.replace(LONE_SURROGATE, "\uFFFD") : value));
  const ids = async (statement: typeof insert, rows: object[], at: number | undefined) =>
    new Set((await rowsOf<{ id: string }>(pool, statement, { rows: json(rows) }, at)).map((r) => r.id));

  const inserted = grouped<VariableRow>(pool, (rows, at) => ids(insert, rows, at));
  const deleted = grouped<Owned>(pool, (rows, at) => ids(remove, rows, at));
  return {
    /** Whether the row went in: false when its (owner, key, category) is taken. */
    insert: (record: VariableRecord) => inserted(toVariableRow(record)),
    delete: (owner: VarOwner, id: string) => deleted({ id, owner_kind: owner.kind, owner_id: owner.id }),
  };
}
