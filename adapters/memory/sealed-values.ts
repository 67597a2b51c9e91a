import type { VariableRecord } from "../../src/schemas/records.js";
import type { RunTaskRecord, TaskDeliveryRecord } from "../../src/schemas/run-task-records.js";
import type { SealedColumn, SealedValueStore } from "../../src/storage/sealed-values.js";

/** Where the memory adapter keeps one kind of sealed value: a map of records and the field. */
export interface MemorySealedSlot<R = any> {
  rows: Map<string, R>;
  /** The record's sealed value, or null when it holds none (a plain variable, a task without key). */
  get(row: R): string | null;
  set(row: R, value: string): void;
}

/**
 * decision D29: the memory adapter's one list of sealed values, over the maps that hold them.
 * `satisfies` makes a name added to SEALED_COLUMNS fail to compile until it is listed here.
 */
export const memorySealedSlots = (maps: {
  variables: Map<string, VariableRecord>;
  tasks: Map<string, RunTaskRecord>;
  deliveries: Map<string, TaskDeliveryRecord>;
}) =>
  ({
    "vars.value": { rows: maps.variables, get: (r: VariableRecord) => (r.sensitive ? r.value : null), set: (r: VariableRecord, v: string) => void (r.value = v) },
    "tasks.hmac_key": { rows: maps.tasks, get: (t: RunTaskRecord) => t.hmacKey, set: (t: RunTaskRecord, v: string) => void (t.hmacKey = v) },
    "task_deliveries.payload": { rows: maps.deliveries, get: (d: TaskDeliveryRecord) => d.payload, set: (d: TaskDeliveryRecord, v: string) => void (d.payload = v) },
  }) satisfies Record<SealedColumn, MemorySealedSlot>;

/** The memory adapter's sealed values (`memorySealedSlots`), in id order like the SQL adapters. */
export function createMemorySealedValueStore(slots: Record<SealedColumn, MemorySealedSlot>): SealedValueStore {
  return {
    async scan(column, { afterId, limit, head }) {
      const { rows, get } = slots[column];
      const found: { id: string; value: string }[] = [];
      for (const [id, row] of rows) {
        const value = get(row);
        if (value !== null && (afterId === null || id > afterId)) found.push({ id, value: head === undefined ? value : value.slice(0, head) });
      }
      return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit);
    },
    async replace(column, id, expected, next) {
      const { rows, get, set } = slots[column];
      const row = rows.get(id);
      if (row === undefined || get(row) !== expected) return false;
      set(row, next);
      return true;
    },
  };
}
