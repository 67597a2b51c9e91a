/** Result of a guarded write: `ok`, or the reason the guard refused it (nothing was written). */
export type GuardedResult<Reason extends string> = { ok: true } | { ok: false; reason: Reason };

/** What a compare-and-set expects of the stored row. */
export interface Expected<S extends string> {
  statuses: readonly S[];
  version: number;
}
