import { expect } from "vitest";
import type { SealedColumn } from "../../storage/sealed-values.js";
import type { ConformanceContext } from "./context.js";
import { sensitiveVariable, variable, WS } from "./fixtures.js";
import { PENDING } from "./outbox-support.js";
import { delivery, result, rid, run, runTask, stage, started } from "./run-task-fixtures.js";

/**
 * How the sealed-value cases store and read back each kind in SEALED_COLUMNS through the
 * aggregate's own methods, so `sealedValues` is checked against what the other stores see.
 */
export interface SealedKind {
  /** Stores one row per entry holding `value` as its sealed value, and `plain` rows holding none. */
  seed(entries: readonly { id: string; value: string }[], plain?: readonly string[]): Promise<void>;
  /** The whole record of row `id`, as its aggregate's `get` returns it. */
  get(id: string): Promise<Record<string, unknown> | null>;
  /** The record field holding the sealed value. */
  field: string;
  /** Whether the kind has rows that hold no sealed value (a plain variable, a task without key). */
  hasPlainRows: boolean;
}

export function sealedKinds(ctx: ConformanceContext): Record<SealedColumn, SealedKind> {
  const s = () => ctx.storage;
  return {
    "vars.value": {
      field: "value",
      hasPlainRows: true,
      async seed(entries, plain = []) {
        for (const { id, value } of entries) await s().variables.insert(sensitiveVariable({ id, key: `k-${id}`, value }));
        for (const id of plain) await s().variables.insert(variable({ id, key: `k-${id}` }));
      },
      get: (id) => s().variables.get(WS, id) as Promise<Record<string, unknown> | null>,
    },
    "tasks.hmac_key": {
      field: "hmacKey",
      hasPlainRows: true,
      async seed(entries, plain = []) {
        for (const { id, value } of entries) await s().runTasks.insert(runTask({ id, name: `n-${id}`, hmacKey: value }));
        for (const id of plain) await s().runTasks.insert(runTask({ id, name: `n-${id}`, hmacKey: null }));
      },
      get: (id) => s().runTasks.get(id) as Promise<Record<string, unknown> | null>,
    },
    "task_deliveries.payload": {
      field: "payload",
      hasPlainRows: false,
      // Outbox rows are only ever written by a stage start: one stage, one result per row.
      async seed(entries) {
        const results = entries.map((_, i) => result({ id: rid("taskrs", i + 1), position: i }));
        await s().runs.create(run(), [stage()], results);
        const rows = entries.map(({ id, value }, i) => delivery({ id, taskResultId: results[i]!.id, payload: value }));
        const writes = results.map((r, i) => ({ next: { ...r, accessTokenDigest: `digest-${i}`, version: 2 }, expected: PENDING }));
        expect(await s().taskStages.start(started(stage()), PENDING, writes, rows)).not.toBeNull();
      },
      get: (id) => s().taskDeliveries.get(id) as Promise<Record<string, unknown> | null>,
    },
  };
}
