import type { AuditEvent } from "../../src/schemas/audit.js";
import { isApplied } from "../../src/storage/audit-scope.js";
import { isStorageUnavailableError } from "../../src/storage/unavailable.js";
import { appendAuditEvent } from "./audit.js";
import { appendAuditEvents } from "./audit-many.js";
import { deadlineOf } from "./bounded-pool.js";
import { retrying, transaction, type PgPoolLike, type Queryable } from "./driver.js";
import { createWriteGroup } from "./write-group.js";

type AnyStore = Record<string, (...args: unknown[]) => Promise<unknown>>;
/** Runs `use` with a copy of one store whose every statement goes to `client` (audited.ts). */
export type Pinned = <R>(client: Queryable, use: (store: AnyStore) => Promise<R>) => Promise<R>;

/** One audited write: the store method to run, its arguments and the event it records when it applied. */
export interface AuditedWrite {
  pinned: Pinned;
  method: string;
  args: unknown[];
  event: AuditEvent;
  /**
   * The method sends its statements without a transaction of its own, so it may run beside others
   * on one connection: writes of one store run at once through one copy, whose own write groups
   * then join them into one statement.
   */
  concurrent: boolean;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Writes one transaction carries at most: it holds its organizations' chain heads until it commits. */
const MAX_GROUP = 64;

/**
 * decision D64: the audited writes asked for in one turn of the event loop commit in one
 * transaction. Every audited write of an organization takes its chain head, so lone transactions
 * queued on that row one commit (WAL flush) at a time; a group runs its writes as lone writes
 * would, appends the events of those that applied in one statement per organization and commits
 * once. A group that fails (a write that throws, a deadlock retried to the end) is rolled back
 * whole, and then each write runs in its own transaction, so only the one at fault fails, with
 * the error it would have had alone.
 */
export function createAuditedGroup(pool: PgPoolLike, q: string): (write: AuditedWrite) => Promise<unknown> {
  const group = createWriteGroup<AuditedWrite, Outcome>(
    async (writes, at) => {
      if (writes.length > 1) {
        try {
          const values = await retrying(() => transaction(pool, (client) => together(client, q, writes), at));
          return values.map((value) => ({ ok: true, value }));
        } catch (error) {
          // An unreachable database fails every write alike: answer at once (D28), not write by write.
          if (isStorageUnavailableError(error)) throw error;
        }
      }
      const outcomes: Outcome[] = [];
      for (const write of writes) outcomes.push(await alone(pool, q, write, at).then((value) => ({ ok: true, value }), (error: unknown) => ({ ok: false, error })));
      return outcomes;
    },
    MAX_GROUP,
    () => deadlineOf(pool),
  );
  return async (write) => {
    const outcome = await group(write.event.id, write);
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };
}

const call = (store: AnyStore, write: AuditedWrite): Promise<unknown> => store[write.method]!(...write.args);

/** decision D53: one write and its event in a transaction of their own. */
const alone = (pool: PgPoolLike, q: string, write: AuditedWrite, at: number | undefined): Promise<unknown> =>
  retrying(() =>
    transaction(pool, async (client) => {
      const value = await write.pinned(client, (store) => call(store, write));
      if (isApplied(value)) await appendAuditEvent(client, q, write.event);
      return value;
    }, at),
  );

/**
 * `client` sending one statement at a time: the writes of one store run at once, and their write
 * groups may flush in the same turn. node-postgres queues a second query itself, but warns that
 * doing so is deprecated (it printed under load, found from outside), and pg 9 will refuse it.
 */
function oneAtATime(client: Queryable): Queryable {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    query(config) {
      const sent = tail.then(() => client.query(config));
      tail = sent.catch(() => undefined);
      return sent;
    },
  };
}

async function together(transaction: Queryable, q: string, writes: readonly AuditedWrite[]): Promise<unknown[]> {
  const client = oneAtATime(transaction);
  const values = new Map<AuditedWrite, unknown>();
  // Concurrent writes of one store through one copy: its write groups join them.
  const byStore = new Map<Pinned, AuditedWrite[]>();
  for (const write of writes) if (write.concurrent) byStore.set(write.pinned, [...(byStore.get(write.pinned) ?? []), write]);
  for (const [pinned, own] of byStore) {
    const settled = await pinned(client, (store) => Promise.allSettled(own.map((write) => call(store, write))));
    settled.forEach((s, i) => {
      if (s.status === "rejected") throw s.reason;
      values.set(own[i]!, s.value);
    });
  }
  for (const write of writes) if (!write.concurrent) values.set(write, await write.pinned(client, (store) => call(store, write)));
  // The events of the writes that applied, in the order the writes were asked for. A write that
  // swallowed a violation (a taken name) left the transaction aborted: this statement then fails
  // and the group runs alone. When no write applied, COMMIT has nothing to lose.
  const recorded = writes.filter((write) => isApplied(values.get(write)));
  const organizations = [...new Set(recorded.map((w) => w.event.organization))].sort();
  for (const organization of organizations)
    await appendAuditEvents(client, q, organization, recorded.filter((w) => w.event.organization === organization).map((w) => w.event));
  return writes.map((write) => values.get(write));
}
