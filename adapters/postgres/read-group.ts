import type { Queryable, Statement } from "./driver.js";
import { rowsOf } from "./driver.js";
import { isStorageUnavailableError } from "../../src/storage/unavailable.js";

/** Keys one statement reads at most; more are split across statements running side by side. */
const MAX_KEYS = 500;

/**
 * Reads by key asked for in one run of the microtask queue, coalesced into one statement per
 * `MAX_KEYS` keys: 1,000 stages started at once read their stage, run, workspace and
 * results each, 4,000 round trips that a database sharing two cores with its hosts pays a context
 * switch for, and now 4 statements. A microtask, not `setImmediate`: a lone read waits for nothing,
 * and calls made together (a loop, or continuations of one batch) still share the statement.
 * Each read still runs after it was asked for, in one snapshot, as a lone read would.
 *
 * `statement` takes the keys as `@keys` (a `text[]`) and returns rows carrying their key in `keyOf`.
 * `schedule` may be `setImmediate` instead, to also gather the reads of every request that one
 * event-loop turn read from its sockets (each arrives in its own I/O callback).
 */
interface Waiter<Row> {
  resolve(rows: Row[]): void;
  reject(error: unknown): void;
}

export function createReadGroup<Row>(db: Queryable, statement: Statement, keyOf: (row: Row) => string, schedule: (flush: () => void) => unknown = queueMicrotask) {
  let waiting = new Map<string, Waiter<Row>[]>();

  /** Reads `part` in one statement; when that fails for another reason than an unreachable database, each key alone. */
  function read(batch: Map<string, Waiter<Row>[]>, part: string[]): void {
    rowsOf<Row>(db, statement, { keys: part }).then(
      (rows) => {
        const found = new Map<string, Row[]>();
        for (const row of rows) {
          const key = keyOf(row);
          const list = found.get(key);
          if (list) list.push(row);
          else found.set(key, [row]);
        }
        for (const key of part) for (const w of batch.get(key)!) w.resolve(found.get(key) ?? []);
      },
      (error: unknown) => {
        // One request's key must not fail the other requests of its turn (a review found a key
        // with NUL failing every read of the turn): only the key at fault fails.
        if (part.length > 1 && !isStorageUnavailableError(error)) for (const key of part) read(batch, [key]);
        else for (const key of part) for (const w of batch.get(key)!) w.reject(error);
      },
    );
  }

  function flush(): void {
    const batch = waiting;
    waiting = new Map();
    const keys = [...batch.keys()];
    for (let from = 0; from < keys.length; from += MAX_KEYS) read(batch, keys.slice(from, from + MAX_KEYS));
  }

  /** The rows of `key`, in the statement's order. */
  return (key: string): Promise<Row[]> =>
    new Promise<Row[]>((resolve, reject) => {
      // PostgreSQL text cannot hold NUL (it refuses the parameter): no stored key has one.
      if (key.includes("\u0000")) return resolve([]);
      if (waiting.size === 0) schedule(flush);
      const list = waiting.get(key);
      if (list) list.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
    });
}
