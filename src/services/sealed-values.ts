import type { Keyring } from "../crypto/keyring.js";
import type { Storage } from "../storage/types.js";
import { hmacKeyBinding } from "./run-task-config.js";
import { variableBinding } from "./var-engine.js";

export interface SealedValues {
  /** How many stored values each key id seals (sensitive variables and parameters, run task HMAC keys). */
  byKey: Record<string, number>;
  /** The keyring's error for the first value it cannot open, or null when it opens one of each key. */
  failure: string | null;
}

/**
 * Whether a keyring opens what a storage holds, found without writing (decisions D11, D29): counts
 * the sealed values by key id and opens the first value of each key, so a replaced or missing key is
 * reported before a server starts on it (`runplane serve` and `runplane doctor` share this check).
 */
export async function inspectSealedValues(storage: Storage, keyring: Keyring, batchSize = 500): Promise<SealedValues> {
  const byKey: Record<string, number> = {};
  let failure: string | null = null;
  const visit = (sealed: string, binding: string): void => {
    const keyId = keyring.keyIdOf(sealed) ?? "(unreadable)";
    byKey[keyId] = (byKey[keyId] ?? 0) + 1;
    if (byKey[keyId] > 1 || failure !== null) return;
    try {
      keyring.open(sealed, binding);
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
  };
  for (let after: string | null = null; ; ) {
    const rows = await storage.variables.scanSensitive(after, batchSize);
    if (rows.length === 0) break;
    for (const row of rows) visit(row.value, variableBinding(row.id));
    after = rows[rows.length - 1]!.id;
  }
  for (let after: string | null = null; ; ) {
    const rows = await storage.runTasks.scanSealed(after, batchSize);
    if (rows.length === 0) break;
    for (const row of rows) if (row.hmacKey !== null) visit(row.hmacKey, hmacKeyBinding(row.id));
    after = rows[rows.length - 1]!.id;
  }
  return { byKey, failure };
}
