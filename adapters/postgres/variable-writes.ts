import type { VariableRecord, VarOwner } from "../../src/schemas/records.js";
import { toVariableRow, VARIABLES, type VariableRow } from "../sql/rows.js";
import { rowsOf, sql, type PgPoolLike } from "./driver.js";
import { insertManySql, qualified } from "./sql.js";
import { createWriteGroup } from "./write-group.js";
import { deadlineOf } from "./bounded-pool.js";
import { isStorageUnavailableError } from "../../src/storage/unavailable.js";
import type { AuditEvent } from "../../src/schemas/audit.js";
import { takeAuditEvent } from "../../src/storage/audit-scope.js";
import { appendInput } from "./audit-many.js";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Writes one statement carries at most. */
const MAX_GROUP = 100;

type Owned = { id: string; owner_kind: string; owner_id: string };
const byOwner = (a: Owned, b: Owned): number =>
  a.owner_kind < b.owner_kind ? -1 : a.owner_kind > b.owner_kind ? 1 : a.owner_id < b.owner_id ? -1 : a.owner_id > b.owner_id ? 1 : 0;

/** A row to write and, when its write is audited, the event it records if it applied (D64). */
interface Write<Row> {
  row: Row;
  event: AuditEvent | undefined;
}

/**
 * Runs the writes of one turn as one statement: every variable write bumps its owner's
 * revision counter at commit, under that row's lock, so lone statements from concurrent requests
 * queued on it one commit (WAL flush) at a time; a group takes the lock and flushes once. Rows go in
 * owner order, so two groups take the counter rows in one order. A statement that fails (a taken
 * id, a deadlock victim) is rolled back whole: then each write runs alone, so only the one at
 * fault fails, as when every write was its own statement. decision D64: the statement also
 * records the audit events of the rows it wrote, in the order their writes were asked for.
 */
function grouped<Row extends Owned>(pool: PgPoolLike, write: (rows: Row[], events: string, at: number | undefined) => Promise<Set<string>>) {
  const group = createWriteGroup<Write<Row>, boolean | Error>(async (writes, at) => {
    const run = async (part: readonly Write<Row>[]) => {
      const stored = await write(part.map((w) => w.row).sort(byOwner), eventsOf(part), at);
      return part.map((w) => stored.has(w.row.id));
    };
    if (writes.length === 1) return run(writes);
    try {
      return await run(writes);
    } catch (error) {
      // An unreachable database fails every row alike: answer at once (D28), not row by row.
      if (isStorageUnavailableError(error)) throw error;
      const answers: (boolean | Error)[] = [];
      for (const w of writes) answers.push(await run([w]).then(([out]) => out!, toError));
      return answers;
    }
  }, MAX_GROUP, () => deadlineOf(pool));
  return async (row: Row): Promise<boolean> => {
    // Taken when the write is asked for, in its request's scope (a write inside an audited
    // transaction finds it taken already: that transaction records it).
    const out = await group(row.id, { row, event: takeAuditEvent() });
    if (out instanceof Error) throw out;
    return out;
  };
}

/** The events of `writes` as the statement's `@events` takes them: each names the row it goes with. */
const eventsOf = <Row extends Owned>(writes: readonly Write<Row>[]): string =>
  json(writes.flatMap((w, n) => (w.event ? [{ n, target: w.row.id, organization: w.event.organization, ...appendInput(w.event) }] : [])));

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * `insert` and `delete` of `VariableStore`, grouped per turn. An insert whose (owner, key,
 * category) is taken is skipped by `ON CONFLICT` on that index only (a taken id still fails), so
 * a duplicate is told apart without failing the group.
 */
export function createVariableWrites(pool: PgPoolLike, q: string) {
  const insert = sql(recording(q, `${insertManySql(qualified(q, VARIABLES))}
    ON CONFLICT (owner_kind, owner_id, key, category) DO NOTHING RETURNING id`));
  const remove = sql(recording(q, `DELETE FROM ${q}variables v USING json_to_recordset(@rows::json) AS x(id text, owner_kind text, owner_id text)
    WHERE v.id = x.id AND v.owner_kind = x.owner_kind AND v.owner_id = x.owner_id RETURNING v.id`));
  const ids = async (statement: typeof insert, rows: object[], events: string, at: number | undefined) =>
    new Set((await rowsOf<{ id: string }>(pool, statement, { rows: json(rows), events }, at)).map((r) => r.id));

  const inserted = grouped<VariableRow>(pool, (rows, events, at) => ids(insert, rows, events, at));
  const deleted = grouped<Owned>(pool, (rows, events, at) => ids(remove, rows, events, at));
  return {
    /** Whether the row went in: false when its (owner, key, category) is taken. */
    insert: (record: VariableRecord) => inserted(toVariableRow(record)),
    delete: (owner: VarOwner, id: string) => deleted({ id, owner_kind: owner.kind, owner_id: owner.id }),
  };
}

// A lone surrogate is not JSON PostgreSQL accepts; a lone statement parameter stored it as U+FFFD.
const json = (rows: object[]): string => JSON.stringify(rows, (_key, value: unknown) => (typeof value === "string" ? value.replace(LONE_SURROGATE, "\uFFFD") : value));

/**
 * decision D64: `write` (a statement returning the ids it wrote) and, in the same statement, the
 * audit events of the rows it wrote, through `rp_audit_append` per organization. The events of
 * rows it did not write (a taken key) are not recorded; without events it writes as it always did.
 */
const recording = (q: string, write: string): string => `WITH written AS (${write}),
    recorded AS (
      SELECT ${q}rp_audit_append(e.organization, json_agg(json_build_object('id', e.id, 'at', e.at, 'p0', e.p0, 'p1', e.p1, 'p2', e.p2, 'p3', e.p3) ORDER BY e.n))
        FROM json_to_recordset(@events::json) AS e(n int, target text, organization text, id text, at bigint, p0 text, p1 text, p2 text, p3 text)
        WHERE e.target IN (SELECT id FROM written) GROUP BY e.organization ORDER BY e.organization)
  SELECT id FROM written WHERE (SELECT count(*) FROM recorded) >= 0`;
