import type { Storage } from "../../src/storage/types.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";

/**
 * A storage whose database can be taken away (decision D28 tests): after `failFrom(n)`, the n-th
 * store call from then on (0: the next) and every later one rejects with StorageUnavailableError,
 * as an adapter does when its database stops answering mid-request. `failFrom(null)` brings it back.
 */
export interface GatedStorage {
  storage: Storage;
  failFrom(call: number | null): void;
  /** Whether a call was refused since the last `failFrom`. */
  readonly tripped: boolean;
}

export function gatedStorage(inner: Storage): GatedStorage {
  let limit: number | null = null;
  let calls = 0;
  let tripped = false;

  const gate = <T extends object>(store: T): T =>
    new Proxy(store, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (limit !== null && calls++ >= limit) {
            tripped = true;
            return Promise.reject(new StorageUnavailableError("connection refused", "ECONNREFUSED"));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });

  const storage = Object.fromEntries(
    Object.entries(inner).map(([name, member]) => [name, typeof member === "object" && member !== null ? gate(member) : member]),
  ) as unknown as Storage;
  return {
    storage,
    failFrom(call) {
      limit = call;
      calls = 0;
      tripped = false;
    },
    get tripped() {
      return tripped;
    },
  };
}
