import { keyIdOfHead, SEALED_HEAD_LENGTH, type Keyring } from "../crypto/keyring.js";
import { SEALED_COLUMNS, type SealedColumn } from "../storage/sealed-values.js";
import type { Storage } from "../storage/types.js";
import { sealedBinding, UNREADABLE, type SealedValueCounts } from "./sealing.js";

export interface SealedValues {
  /** How many stored values each key id seals, of every kind in SEALED_COLUMNS. */
  byKey: Record<string, number>;
  /** The same by kind: `{ k1: { "vars.value": 2, ... } }` (D29). */
  counts: SealedValueCounts;
  /** The keyring's error for the first value it cannot open, or null when it opens one of each key. */
  failure: string | null;
}

/**
 * Whether a keyring opens what a storage holds, found without writing (decisions D11, D29): counts
 * the sealed values by key id reading only the head of each (a delivery payload is kilobytes), then
 * opens the first value of each key, so a replaced or missing key is reported before a server
 * starts on it (`runplane serve` and `runplane doctor` share this check).
 */
export async function inspectSealedValues(storage: Storage, keyring: Keyring, batchSize = 500): Promise<SealedValues> {
  const byKey: Record<string, number> = {};
  const counts: SealedValueCounts = {};
  // Where the first value of each key is: the id just before it in its kind's id order.
  const firsts = new Map<string, { column: SealedColumn; afterId: string | null }>();
  for (const column of SEALED_COLUMNS) {
    for (let afterId: string | null = null; ; ) {
      const rows = await storage.sealedValues.scan(column, { afterId, limit: batchSize, head: SEALED_HEAD_LENGTH });
      if (rows.length === 0) break;
      let previous = afterId;
      for (const row of rows) {
        const keyId = keyIdOfHead(row.value) ?? UNREADABLE;
        byKey[keyId] = (byKey[keyId] ?? 0) + 1;
        const byColumn = (counts[keyId] ??= {});
        byColumn[column] = (byColumn[column] ?? 0) + 1;
        if (!firsts.has(keyId)) firsts.set(keyId, { column, afterId: previous });
        previous = row.id;
      }
      afterId = rows[rows.length - 1]!.id;
    }
  }
  return { byKey, counts, failure: await firstFailure(storage, keyring, firsts) };
}

async function firstFailure(storage: Storage, keyring: Keyring, firsts: Map<string, { column: SealedColumn; afterId: string | null }>): Promise<string | null> {
  for (const { column, afterId } of firsts.values()) {
    const [row] = await storage.sealedValues.scan(column, { afterId, limit: 1 });
    if (!row) continue; // gone meanwhile
    try {
      keyring.open(row.value, sealedBinding(column, row.id));
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }
  return null;
}
