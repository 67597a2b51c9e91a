/**
 * How this process's delivery attempts of the last minutes ended, for `health()`. A ring
 * of {@link BUCKETS} buckets, each a slice of the window: memory stays fixed however many attempts
 * there are, and a bucket is reused once its slice has left the window. Time is passed in (the
 * instance's clock), so tests move it by hand.
 */

/** What the window holds at one instant. */
export interface AttemptTally {
  attempts: number;
  failed: number;
  /** Failed attempts by outcome class (`4xx`, `network`, ...). */
  failedByClass: Record<string, number>;
}

export interface AttemptWindow {
  /** Counts one attempt at `at` (ms since the epoch): `ok` when it was answered exactly 200. */
  record(at: number, outcomeClass: string, ok: boolean): void;
  /** The attempts of the window that ends at `at`. */
  read(at: number): AttemptTally;
}

const BUCKETS = 30;

interface Bucket {
  /** Which slice of time (`floor(at / span)`) the counts are of. */
  slice: number;
  attempts: number;
  failed: number;
  classes: Map<string, number>;
}

export function createAttemptWindow(windowMs: number): AttemptWindow {
  const span = Math.max(1, Math.ceil(windowMs / BUCKETS));
  const ring: Bucket[] = Array.from({ length: BUCKETS }, () => ({ slice: -Infinity, attempts: 0, failed: 0, classes: new Map() }));
  const bucketOf = (slice: number): Bucket => ring[((slice % BUCKETS) + BUCKETS) % BUCKETS]!;
  return {
    record(at, outcomeClass, ok) {
      const slice = Math.floor(at / span);
      const bucket = bucketOf(slice);
      // A clock that stepped back finds its bucket reused by a later slice: that attempt is dropped.
      if (bucket.slice > slice) return;
      if (bucket.slice < slice) Object.assign(bucket, { slice, attempts: 0, failed: 0 }).classes.clear();
      bucket.attempts++;
      if (ok) return;
      bucket.failed++;
      bucket.classes.set(outcomeClass, (bucket.classes.get(outcomeClass) ?? 0) + 1);
    },
    read(at) {
      const now = Math.floor(at / span);
      const tally: AttemptTally = { attempts: 0, failed: 0, failedByClass: {} };
      for (const bucket of ring) {
        if (bucket.slice <= now - BUCKETS || bucket.slice > now) continue;
        tally.attempts += bucket.attempts;
        tally.failed += bucket.failed;
        for (const [name, n] of bucket.classes) tally.failedByClass[name] = (tally.failedByClass[name] ?? 0) + n;
      }
      return tally;
    },
  };
}
