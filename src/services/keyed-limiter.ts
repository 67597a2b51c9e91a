import { peekToken, refill, takeToken, type Bucket, type BucketAnswer, type BucketLimit } from "../domain/token-bucket.js";

/**
 * decision D33: token buckets by key (a credential digest, a result id) in one bounded Map. Every
 * call is O(1): a Map keeps insertion order, so a key used again is moved to the end and, past
 * `maxKeys`, the key used least recently is dropped. Whatever keys a caller invents (random tokens),
 * the Map never holds more than `maxKeys` buckets. A dropped key starts full again when it comes
 * back: the price of the bound, paid only while more than `maxKeys` keys are active at once.
 */
export interface KeyedLimiterOptions extends BucketLimit {
  maxKeys: number;
  /** Current time in milliseconds (a fake clock in tests). */
  now: () => number;
}

export interface KeyedLimiter {
  /** Takes a token of `key`'s bucket, or refuses (`ok: false`) and says how long to wait. */
  take(key: string): BucketAnswer;
  /** What `take` would answer, taking nothing. */
  peek(key: string): BucketAnswer;
  /** Whether `key` has a bucket here (its Map doubles as a bounded set of keys). */
  has(key: string): boolean;
  /** Takes `key`'s bucket out (undefined when there is none): to hand it to another limiter. */
  remove(key: string): Bucket | undefined;
  /** Gives `key` a bucket as the most recently used: the one handed over, or a full one. */
  insert(key: string, bucket: Bucket | undefined): void;
  /** Buckets held (at most `maxKeys`). */
  readonly size: number;
}

export function createKeyedLimiter(options: KeyedLimiterOptions): KeyedLimiter {
  const buckets = new Map<string, Bucket>();

  const store = (key: string, bucket: Bucket): void => {
    buckets.delete(key);
    buckets.set(key, bucket);
    if (buckets.size > options.maxKeys) buckets.delete(buckets.keys().next().value!);
  };

  return {
    take(key) {
      const answer = takeToken(buckets.get(key), options.now(), options);
      // A refused key is stored too: a client that keeps knocking stays known, and limited.
      store(key, answer.bucket);
      return answer;
    },
    peek: (key) => peekToken(buckets.get(key), options.now(), options),
    has: (key) => buckets.has(key),
    remove(key) {
      const bucket = buckets.get(key);
      buckets.delete(key);
      return bucket;
    },
    insert: (key, bucket) => store(key, bucket ?? refill(undefined, options.now(), options)),
    get size() {
      return buckets.size;
    },
  };
}
