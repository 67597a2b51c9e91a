import type { RunTaskRecord, TaskDeliveryRecord, TaskResultRecord } from "../../src/schemas/run-task-records.js";
import type { ClaimedDelivery, DeliveryClaim, DeliverySettlement, OutboxStats, PoolBacklog, SettleOutcome, TaskDeliveryStore } from "../../src/storage/run-tasks-types.js";
import { assertDistinctIds, byDueThenId, plusMs } from "../../src/storage/outbox-rules.js";
import { createMemoryAttemptStore, type MemoryAttemptStore } from "./delivery-attempts.js";
import { createIndex } from "./indexes.js";
import { createDueQueue } from "./due-queue.js";

/** The maps the outbox shares with the other run task stores. */
export interface MemoryOutboxMaps {
  deliveries: Map<string, TaskDeliveryRecord>;
  results: Map<string, TaskResultRecord>;
  tasks: Map<string, RunTaskRecord>;
}

export interface MemoryDeliveryStore extends TaskDeliveryStore {
  /** Adds rows written by `TaskStageStore.start`. */
  insertAll(rows: readonly TaskDeliveryRecord[]): void;
  /** The attempts `settle` records (decision D31): `Storage.deliveryAttempts`. */
  attempts: MemoryAttemptStore;
}

function* claimable(open: ReadonlyMap<string, TaskDeliveryRecord>, now: string): Iterable<TaskDeliveryRecord> {
  for (const d of open.values()) if (d.dueAt <= now && (d.leaseExpiresAt === null || d.leaseExpiresAt <= now)) yield d;
}

/** `TaskDeliveryStore.stats` over the open rows at `now`. */
function outboxStats(open: ReadonlyMap<string, TaskDeliveryRecord>, now: string): OutboxStats {
  let due = 0;
  let leased = 0;
  let oldestDueAt: string | null = null;
  for (const d of claimable(open, now)) {
    due++;
    if (oldestDueAt === null || d.dueAt < oldestDueAt) oldestDueAt = d.dueAt;
  }
  let retrying = 0;
  let oldestRetryingAt: string | null = null;
  for (const d of open.values()) {
    if (d.leaseExpiresAt !== null && d.leaseExpiresAt > now) leased++;
    if (d.attempt === 0) continue;
    retrying++;
    if (oldestRetryingAt === null || d.createdAt < oldestRetryingAt) oldestRetryingAt = d.createdAt;
  }
  return { due, leased, oldestDueAt, retrying, oldestRetryingAt };
}

/** `TaskDeliveryStore.waitingByPool` over the open rows at `now` (decision D34). */
function waitingByPool(open: ReadonlyMap<string, TaskDeliveryRecord>, now: string, limit: number): PoolBacklog[] {
  const pools = new Map<string, PoolBacklog>();
  for (const d of claimable(open, now)) {
    if (!d.agentPoolId) continue;
    const seen = pools.get(d.agentPoolId);
    if (!seen) pools.set(d.agentPoolId, { agentPoolId: d.agentPoolId, due: 1, oldestDueAt: d.dueAt });
    else (seen.due++, d.dueAt < seen.oldestDueAt && (seen.oldestDueAt = d.dueAt));
  }
  return [...pools.values()].sort((a, b) => (a.agentPoolId < b.agentPoolId ? -1 : 1)).slice(0, limit);
}

/** decision D16: the window a claim at `request.now` opens, the same for every row it claims. */
function windowOf(request: DeliveryClaim): Pick<TaskResultRecord, "deadlineAt" | "deadlineMaxAt" | "updatedAt"> {
  const { ms, maxMs } = request.window;
  return { deadlineAt: plusMs(request.now, ms), deadlineMaxAt: maxMs === null ? null : plusMs(request.now, maxMs), updatedAt: request.now };
}

/** decision D58: a claimed pool row's attempt an agent took and never reported is closed, and counted. */
function closeUnreported(attempts: MemoryAttemptStore, d: TaskDeliveryRecord, now: string): void {
  const unreported = d.agentPoolId ? attempts.closeUnreported(d.taskResultId, d.id, d.attempt + 1, now) : null;
  if (unreported !== null) Object.assign(d, { attempt: d.attempt + 1, lastError: unreported });
}

/** decision D16: a claimed row's pending result without a deadline gets its window now. */
function openWindow(result: TaskResultRecord | undefined, window: ReturnType<typeof windowOf>): void {
  if (!result || result.status !== "pending" || result.deadlineAt !== null) return;
  result.deadlineAt = window.deadlineAt;
  result.deadlineMaxAt = window.deadlineMaxAt;
  result.updatedAt = window.updatedAt;
  result.version++;
}

/**
 * A copy of an outbox row: every field is a string, a number or null, so a spread copies it whole
 * (the generic `clone` walked its keys: 3 % of a delivery's CPU and 1.5 KB of garbage per row).
 */
const copyRow = (d: TaskDeliveryRecord): TaskDeliveryRecord => ({ ...d });

/** Oldest first, then by id. */
const byCreation = (a: TaskDeliveryRecord, b: TaskDeliveryRecord): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** A claimed row with what its attempt needs of its result and task, as stored now. */
function claimedOf(d: TaskDeliveryRecord, { results, tasks }: Pick<MemoryOutboxMaps, "results" | "tasks">): ClaimedDelivery {
  const r = results.get(d.taskResultId);
  const task = tasks.get(d.taskId);
  return {
    row: copyRow(d),
    result: r
      ? { status: r.status, statusTimestamps: { ...r.statusTimestamps }, deadlineAt: r.deadlineAt, version: r.version, updatedAt: r.updatedAt }
      : null,
    task: task ? { hmacKey: task.hmacKey } : null,
  };
}

/**
 * decision D34: one due queue per agent pool ("" for the platform's own rows), so a claim walks
 * only the rows of the pools it asks for.
 */
function createPoolQueues(open: ReadonlyMap<string, TaskDeliveryRecord>) {
  const queues = new Map<string, ReturnType<typeof createDueQueue>>();
  const queueOf = (pool: string): ReturnType<typeof createDueQueue> => {
    let q = queues.get(pool);
    if (!q) queues.set(pool, (q = createDueQueue((id) => open.has(id))));
    return q;
  };
  const file = (row: TaskDeliveryRecord): void => queueOf(row.agentPoolId ?? "").file(row);
  return {
    file,
    forget: (row: TaskDeliveryRecord): void => queueOf(row.agentPoolId ?? "").forget(row.id),
    /** Up to `limit` claimable rows of `pools` in claim order; rows taken but not kept go back. */
    take(now: string, limit: number, pools: readonly string[] | null | undefined): TaskDeliveryRecord[] {
      const keys = pools === undefined || pools === null ? [""] : [...new Set(pools)].filter((p) => p !== "");
      if (keys.length === 1) return queueOf(keys[0]!).take(now, limit);
      const taken = keys.flatMap((k) => queueOf(k).take(now, limit)).sort(byDueThenId);
      for (const row of taken.slice(limit)) file(row);
      return taken.slice(0, limit);
    },
  };
}

/** The outbox in memory: every method runs synchronously inside its promise, so each is atomic. */
export function createMemoryDeliveryStore({ deliveries, results, tasks }: MemoryOutboxMaps): MemoryDeliveryStore {
  // Open rows only: a claim never walks the closed history.
  const open = new Map<string, TaskDeliveryRecord>();
  const byResult = createIndex<TaskDeliveryRecord>((d) => d.taskResultId);
  const attempts = createMemoryAttemptStore();
  const queue = createPoolQueues(open);

  function settleOne(e: DeliverySettlement): SettleOutcome {
    const row = open.get(e.id);
    if (!row || row.fencingToken !== e.fencingToken) return { written: false, result: false };
    // decision D58: the job's record only; the row keeps its lease.
    if (e.type === "hand-out") return attempts.record(e.record), { written: true, result: false };
    Object.assign(row, e.type === "release" ? {} : e.fields, { leaseOwner: null, leaseExpiresAt: null });
    if (e.type !== "release" && e.record) attempts.record(e.record);
    if (e.type !== "close") return queue.file(row), { written: true, result: false };
    open.delete(e.id);
    queue.forget(row);
    const advance = e.result;
    const result = advance ? results.get(advance.id) : undefined;
    if (!advance || !result || !advance.expected.statuses.includes(result.status) || result.version !== advance.expected.version) {
      return { written: true, result: false };
    }
    const { status, statusTimestamps, version, updatedAt } = advance;
    Object.assign(result, { status, statusTimestamps: { ...statusTimestamps }, version, updatedAt });
    return { written: true, result: true };
  }

  /** decision D31: the result's retrying row, or why there is none to move. */
  function retrying(taskResultId: string, now: string): TaskDeliveryRecord | "not-retrying" {
    const result = results.get(taskResultId);
    if (!result || result.status !== "pending" || result.deadlineAt === null || result.deadlineAt <= now) return "not-retrying";
    const ids = byResult.ids(taskResultId);
    return ids.map((id) => open.get(id)).find((d) => d !== undefined && d.attempt > 0) ?? "not-retrying";
  }

  return {
    attempts,
    insertAll(rows) {
      for (const d of rows) {
        const row = { ...d, agentPoolId: d.agentPoolId ?? null };
        deliveries.set(d.id, row);
        byResult.add(row);
        if (row.closedAt === null) open.set(d.id, row), queue.file(row);
      }
    },
    async get(id) {
      const row = deliveries.get(id);
      return row ? copyRow(row) : null;
    },
    listByResult: async (taskResultId) => byResult.ids(taskResultId).map((id) => deliveries.get(id)!).sort(byCreation).map(copyRow),
    async claim(request) {
      const leaseExpiresAt = plusMs(request.now, request.leaseMs);
      const due = queue.take(request.now, request.limit, request.pools);
      const window = windowOf(request);
      for (const d of due) {
        d.leaseOwner = request.owner;
        d.leaseExpiresAt = leaseExpiresAt;
        d.fencingToken++;
        queue.file(d);
        openWindow(results.get(d.taskResultId), window);
        closeUnreported(attempts, d, request.now);
      }
      return due.map((d) => claimedOf(d, { results, tasks }));
    },
    stats: async (now) => outboxStats(open, now),
    waitingByPool: async (now, limit) => waitingByPool(open, now, limit),
    async settle(batch) {
      assertDistinctIds(batch);
      return batch.map(settleOne);
    },
    async expedite(taskResultId, now) {
      const row = retrying(taskResultId, now);
      if (row === "not-retrying") return { ok: false, reason: row };
      if (row.leaseExpiresAt !== null && row.leaseExpiresAt > now) return { ok: false, reason: "leased" };
      if (row.dueAt > now) (row.dueAt = now), queue.file(row);
      return { ok: true };
    },
  };
}
