/**
 * Rendered bodies of repeated reads, kept per credential and URL and served only while the storage
 * revisions they were rendered under stand still (src/storage/revisions.ts). Memory is bounded by
 * the bytes held, least recently used first out.
 */
export interface ReadCacheOptions {
  /** Upper bound of the bytes held (bodies, keys and stamps). Default 8 MiB. */
  maxBytes?: number;
  /** An entry older than this is rendered again even when nothing changed. */
  maxAgeMs: number;
  now: () => number;
}

interface Entry {
  stamp: string;
  /** UTF-8 bytes, encoded once: a hit then writes them to the socket without encoding a string. */
  body: Uint8Array<ArrayBuffer>;
  storedAt: number;
}

export interface ReadCache {
  /** The body stored under `key` for exactly `stamp`, if still fresh. */
  get(key: string, stamp: string): Uint8Array<ArrayBuffer> | undefined;
  set(key: string, stamp: string, body: string): void;
  readonly size: number;
  readonly bytes: number;
}

export const DEFAULT_READ_CACHE_BYTES = 8 * 1024 * 1024;

const encoder = new TextEncoder();

export function createReadCache(options: ReadCacheOptions): ReadCache {
  const maxBytes = options.maxBytes ?? DEFAULT_READ_CACHE_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new TypeError("readCache.maxBytes must be a non-negative integer");
  // A Map iterates in insertion order: re-inserting on a hit makes the first key the least recent.
  const entries = new Map<string, Entry>();
  let bytes = 0;
  const cost = (key: string, entry: Entry) => key.length + entry.body.byteLength + entry.stamp.length;
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    bytes -= cost(key, entry);
  };
  return {
    get(key, stamp) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.stamp !== stamp || options.now() - entry.storedAt >= options.maxAgeMs) {
        drop(key);
        return undefined;
      }
      entries.delete(key);
      entries.set(key, entry);
      return entry.body;
    },
    set(key, stamp, body) {
      drop(key);
      const entry: Entry = { stamp, body: encoder.encode(body), storedAt: options.now() };
      const size = cost(key, entry);
      // A body that would take more than an eighth of the cache is rendered every time instead.
      if (size > maxBytes / 8) return;
      entries.set(key, entry);
      bytes += size;
      for (const oldest of entries.keys()) {
        if (bytes <= maxBytes) break;
        drop(oldest);
      }
    },
    get size() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
  };
}
