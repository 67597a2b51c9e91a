import { ATTEMPT_LIMITS } from "../schemas/delivery-attempts.js";
import type { TaskDeliveryRecord } from "../schemas/run-task-records.js";
import type { DeliverySettlement } from "./run-tasks-types.js";

/**
 * Small rules of the delivery outbox contract that every adapter applies the same way, kept once so
 * the adapters cannot drift apart on them.
 */

/** `at` (ISO-8601) plus `ms`, as ISO-8601: a lease's expiry, a deadline window's end. */
export const plusMs = (at: string, ms: number): string => new Date(Date.parse(at) + ms).toISOString();

/** The claim order: `dueAt`, then `id`, by code units. */
export const byDueThenId = (a: TaskDeliveryRecord, b: TaskDeliveryRecord): number =>
  a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** `settle` refuses a batch that names one row twice, whole, before writing anything. */
export function assertDistinctIds(batch: readonly DeliverySettlement[]): void {
  const ids = new Set<string>();
  for (const entry of batch) {
    if (ids.has(entry.id)) throw new TypeError(`settle: the batch names delivery ${entry.id} twice`);
    ids.add(entry.id);
  }
}

/**
 * decision D31: the place of attempt `number` among its result's kept attempts. Numbers 20 apart
 * share a place and the higher one keeps it, so a result holds its newest 20 without counting.
 */
export const attemptSlot = (number: number): number => (number - 1) % ATTEMPT_LIMITS.perResult;

/**
 * An attempt may take a place held by `stored`: none, an older number, or (decision D58) the same
 * attempt still `under-way`, which its end completes in place.
 */
export const takesSlot = (next: { number: number }, stored: { number: number; outcome: string } | undefined): boolean =>
  stored === undefined || next.number > stored.number || (next.number === stored.number && stored.outcome === "under-way");

/**
 * decision D45, D58: the words of an attempt whose agent never reported (the agent's `--name`,
 * else its id), split so the SQL adapters spell the same sentence in their claim.
 */
export const NO_REPORT = { code: "no-report", before: "no report from agent ", after: ": the integration may have received the request" } as const;
export const noReportDetail = (agent: string): string => `${NO_REPORT.before}${agent}${NO_REPORT.after}`;
