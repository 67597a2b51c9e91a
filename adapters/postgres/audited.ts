import { AUDITED_WRITES, takeAuditEvent } from "../../src/storage/audit-scope.js";
import type { Storage } from "../../src/storage/types.js";
import { createAuditedGroup, type Pinned } from "./audited-group.js";
import type { PgPoolClientLike, PgPoolLike, PgQueryConfig, Queryable } from "./driver.js";

type AnyStore = Record<string, (...args: unknown[]) => Promise<unknown>>;
/** Builds one store over a pool; called per audited write with a pool pinned to its transaction. */
export type StoreFactory = (pool: PgPoolLike) => AnyStore;

/**
 * decision D53: a write with a pending audit event runs on one connection inside one transaction,
 * through a copy of its store pinned to that connection (reused, D59), and its event is appended in the same
 * transaction when it applied. The store's own transactions become savepoints of it, its grouped
 * statements run alone: the write behaves as it always does, and commits with its event or not at
 * all. Audited writes of one turn share that transaction (D64). A write without an event takes the
 * store's usual path (its groups included).
 */
export function withPostgresAudit<S extends Storage>(storage: S, pool: PgPoolLike, q: string, factories: Partial<Record<keyof typeof AUDITED_WRITES, StoreFactory>>): S {
  const wrapped: Record<string, unknown> = { ...(storage as object) };
  const audited = createAuditedGroup(pool, q);
  for (const [name, methods] of Object.entries(AUDITED_WRITES) as [keyof typeof AUDITED_WRITES, readonly string[]][]) {
    const store = (storage as unknown as Record<string, AnyStore | undefined>)[name];
    const factory = factories[name];
    if (!store || !factory) continue;
    const copy: AnyStore = { ...store };
    const pinned = pinnedCopies(factory);
    const concurrent = new Set<string>(CONCURRENT_WRITES[name] ?? []);
    for (const method of methods) {
      const write = store[method]!.bind(store);
      copy[method] = async (...args: unknown[]) => {
        const event = takeAuditEvent();
        return event ? audited({ pinned, method, args, event, concurrent: concurrent.has(method) }) : write(...args);
      };
    }
    wrapped[name] = copy;
  }
  return wrapped as S;
}

/**
 * decision D64: the audited writes that send their statements without a transaction of their own
 * (each one statement, or one through the store's write group), so those of one group run at once
 * on its connection. Any other runs alone in turn: a store's own transaction is a savepoint there,
 * and another write's statements between its SAVEPOINT and a ROLLBACK TO it would be undone too.
 */
const CONCURRENT_WRITES: Partial<Record<keyof typeof AUDITED_WRITES, readonly string[]>> = {
  variables: ["insert", "update", "delete", "deleteByOwner"],
};

/** Copies kept for reuse per store: about the audited writes one host runs at once. */
const MAX_IDLE_COPIES = 16;

/**
 * decision D59: the store copies an audited write runs through, built once and reused (building
 * one compiles its statements: about 50 us a write). A copy serves one write at a time, so its
 * write groups only ever hold that write's statements, as a fresh copy's did.
 */
function pinnedCopies(factory: StoreFactory): Pinned {
  const idle: { slot: Slot; store: AnyStore }[] = [];
  return async <R>(client: Queryable, use: (store: AnyStore) => Promise<R>): Promise<R> => {
    const copy = idle.pop() ?? newCopy(factory);
    copy.slot.client = client;
    try {
      return await use(copy.store);
    } finally {
      copy.slot.client = undefined;
      if (idle.length < MAX_IDLE_COPIES) idle.push(copy);
    }
  };
}

function newCopy(factory: StoreFactory) {
  const slot: Slot = {};
  return { slot, store: factory(pinnedPool(slot)) };
}

/** The connection of the transaction a copy serves now. */
interface Slot {
  client?: Queryable;
}

const TX = /^\s*(BEGIN|COMMIT|ROLLBACK)\s*;?\s*$/i;

/**
 * A pool whose every connection is `slot`'s client, inside the transaction the caller holds:
 * BEGIN, COMMIT and ROLLBACK become a savepoint, its release and a rollback to it; release and
 * close do nothing (the caller's transaction owns the connection).
 */
export function pinnedPool(slot: Slot): PgPoolLike {
  let depth = 0;
  const client = (): Queryable => {
    if (!slot.client) throw new Error("runplane postgres: an audited store copy used outside its write");
    return slot.client;
  };
  const connection = (): PgPoolClientLike => {
    const names: string[] = [];
    return {
      query(config: PgQueryConfig) {
        const verb = TX.exec(config.text)?.[1]?.toUpperCase();
        if (!verb) return client().query(config);
        if (verb === "BEGIN") names.push(`rp_audit_${++depth}`);
        const name = verb === "BEGIN" ? names.at(-1)! : names.pop() ?? "rp_audit_0";
        const text = verb === "BEGIN" ? `SAVEPOINT ${name}` : verb === "COMMIT" ? `RELEASE SAVEPOINT ${name}` : `ROLLBACK TO SAVEPOINT ${name}`;
        return client().query({ text });
      },
      on: (() => undefined) as PgPoolClientLike["on"],
      removeListener: () => undefined,
      release: () => undefined,
    };
  };
  return {
    query: (config) => client().query(config),
    connect: async () => connection(),
    on: () => undefined,
    removeListener: () => undefined,
    end: async () => undefined,
  };
}
