import { keyIdOfHead, rowBinding, SEALED_HEAD_LENGTH } from "../crypto/keyring.js";
import { recordInEveryOrganization } from "./audit.js";
import { SEALED_COLUMNS, type SealedColumn } from "../storage/sealed-values.js";
import type { Storage } from "../storage/types.js";
import type { ServiceContext } from "./context.js";

const BINDING_PREFIXES = new Map<SealedColumn, string>();

/**
 * The associated data of a sealed value (D11), and the only way the core builds one: a value sealed
 * anywhere is therefore of a kind in SEALED_COLUMNS, which `reencrypt` and `doctor` walk (D29).
 */
export function sealedBinding(column: SealedColumn, id: string): string {
  // Every sealed payload of the outbox is bound here, twice a delivery: the column's part once per column.
  let prefix = BINDING_PREFIXES.get(column);
  if (prefix === undefined) {
    const [table, name] = column.split(".") as [string, string];
    BINDING_PREFIXES.set(column, (prefix = rowBinding(table, name, "")));
  }
  return prefix + id;
}

/** How many stored values each key id seals, by kind: `{ k1: { "vars.value": 2, ... } }` (kinds with none left out). */
export type SealedValueCounts = Record<string, Partial<Record<SealedColumn, number>>>;

/** Key id counted for a stored value that is not a sealed value at all (written by hand, damaged). */
export const UNREADABLE = "(unreadable)";

const BATCH = 200;

/** Every stored sealed value of `column`, in id order, one batch at a time. */
async function* batches(storage: Storage, column: SealedColumn, head?: number) {
  for (let afterId: string | null = null; ; ) {
    const rows = await storage.sealedValues.scan(column, { afterId, limit: BATCH, ...(head === undefined ? {} : { head }) });
    if (rows.length === 0) return;
    yield rows;
    afterId = rows[rows.length - 1]!.id;
  }
}

/** Counts what each key seals (decision D29), reading only the head of each value. */
export async function countSealedValues(storage: Storage): Promise<SealedValueCounts> {
  const counts: SealedValueCounts = {};
  for (const column of SEALED_COLUMNS) {
    for await (const rows of batches(storage, column, SEALED_HEAD_LENGTH)) {
      for (const { value } of rows) {
        const byColumn = (counts[keyIdOfHead(value) ?? UNREADABLE] ??= {});
        byColumn[column] = (byColumn[column] ?? 0) + 1;
      }
    }
  }
  return counts;
}

/** The sum of `counts` over `keyIds`. */
export const sealedBy = (counts: SealedValueCounts, keyIds: Iterable<string>): number =>
  [...keyIds].reduce((sum, id) => sum + Object.values(counts[id] ?? {}).reduce((a, n) => a + n, 0), 0);

/**
 * Re-seals every stored sealed value not under the active key with it (decisions D11, D29), kind
 * by kind from SEALED_COLUMNS, each swap a compare-and-set (a value changed meanwhile is left to
 * its writer, who sealed it with the active key). Resolves the number of values moved.
 */
export async function reencryptAll(ctx: Pick<ServiceContext, "storage" | "keyring" | "keys"> & Partial<Pick<ServiceContext, "now">>): Promise<number> {
  // decision D40: to the key this host settled on at start, not one it may leave before sealing.
  await ctx.keys.ready();
  let moved = 0;
  for (const column of SEALED_COLUMNS) {
    for await (const rows of batches(ctx.storage, column)) {
      await ctx.keys.holdKeysOf(rows.map((r) => r.value));
      const { keyring } = ctx;
      const stale = rows.filter((r) => keyring.keyIdOf(r.value) !== keyring.activeKeyId);
      const swapped = await Promise.all(
        stale.map((r) => {
          const plain = keyring.open(r.value, sealedBinding(column, r.id));
          return ctx.storage.sealedValues.replace(column, r.id, r.value, keyring.seal(plain, sealedBinding(column, r.id)));
        }),
      );
      moved += swapped.filter(Boolean).length;
    }
  }
  // decision D53: one event per organization says that the values moved, and to which key; not how
  // many (the instance's count would tell one organization about the others').
  if (moved > 0) {
    const now = ctx.now ?? (() => new Date());
    await recordInEveryOrganization({ storage: ctx.storage, now }, { resource: { type: "keyring", id: ctx.keyring.activeKeyId }, action: "reencrypt", changes: [] });
  }
  return moved;
}
