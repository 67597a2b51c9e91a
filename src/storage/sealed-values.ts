/**
 * Every kind of value the core seals with the keyring (decisions D11, D29), named after its row
 * binding (`<table>.<column>` as the associated data spells it, not necessarily where an adapter
 * keeps it). The core seals only through these names, so a value sealed anywhere is one of them;
 * every adapter maps each name to where it keeps it (`satisfies Record<SealedColumn, ...>`, so a name
 * added here fails to compile until each adapter stores it), and `reencrypt`, `doctor` and the
 * retirement of a key walk this list.
 */
export const SEALED_COLUMNS = ["vars.value", "tasks.hmac_key", "task_deliveries.payload"] as const;

export type SealedColumn = (typeof SEALED_COLUMNS)[number];

/** One stored sealed value: the id of the row it is bound to, and the value (or its head). */
export interface SealedValue {
  id: string;
  value: string;
}

export interface SealedValueScan {
  /** Only rows with `id > afterId` (all when null); ids compare by code units. */
  afterId: string | null;
  limit: number;
  /**
   * When set, each value is cut to its first `head` characters: enough to read its key id without
   * reading a kilobyte payload whole (counting what each key seals).
   */
  head?: number;
}

/**
 * The sealed values of every aggregate, by kind (decision D29), for re-encryption and for counting
 * what each key seals. Values are opaque strings here, as everywhere in the contract.
 */
export interface SealedValueStore {
  /**
   * The sealed values of `column`, ordered by id, at most `limit`. Rows that hold no sealed value
   * there are skipped: a variable that is not sensitive, a run task without an HMAC key.
   */
  scan(column: SealedColumn, query: SealedValueScan): Promise<SealedValue[]>;
  /**
   * Swaps one sealed value only while it still equals `expected` (and the row still holds a sealed
   * value there); nothing else of the row changes (no version, no `updatedAt`: re-encryption is
   * not an update), but a variable's change counters move (`revisions`). `false` when refused.
   */
  replace(column: SealedColumn, id: string, expected: string, next: string): Promise<boolean>;
}
