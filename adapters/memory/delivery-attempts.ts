import type { DeliveryAttemptRecord } from "../../src/schemas/delivery-attempts.js";
import type { DeliveryAttemptStore } from "../../src/storage/attempts-types.js";
import { attemptSlot, NO_REPORT, noReportDetail, takesSlot } from "../../src/storage/outbox-rules.js";
import { clone } from "./clone.js";

const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);
/** Newest first: `startedAt`, then `number`, then `id`, each descending. */
const newestFirst = (a: DeliveryAttemptRecord, b: DeliveryAttemptRecord): number =>
  cmp(b.startedAt, a.startedAt) || cmp(b.number, a.number) || cmp(b.id, a.id);

export interface MemoryAttemptStore extends DeliveryAttemptStore {
  /** Stores an attempt in its result's place (decision D31); called by `settle` for rows it wrote. */
  record(attempt: DeliveryAttemptRecord): void;
  /**
   * decision D58: closes attempt `number` of delivery `deliveryId` as `no-report` when it is still
   * `under-way` (called by the claim that re-takes its row); resolves its detail, else null.
   */
  closeUnreported(taskResultId: string, deliveryId: string, number: number, now: string): string | null;
}

/** Delivery attempts in memory: per result, one attempt per place (`attemptSlot`), the newest. */
export function createMemoryAttemptStore(): MemoryAttemptStore {
  const byResult = new Map<string, Map<number, DeliveryAttemptRecord>>();
  const all = function* (): Iterable<DeliveryAttemptRecord> {
    for (const slots of byResult.values()) yield* slots.values();
  };
  return {
    record(attempt) {
      let slots = byResult.get(attempt.taskResultId);
      if (!slots) byResult.set(attempt.taskResultId, (slots = new Map()));
      const slot = attemptSlot(attempt.number);
      // Every field of an attempt is a string, a number, a boolean or null: a spread copies it whole.
      if (takesSlot(attempt, slots.get(slot))) slots.set(slot, { ...attempt, agentId: attempt.agentId ?? null, agentName: attempt.agentName ?? null });
    },
    closeUnreported(taskResultId, deliveryId, number, now) {
      const a = byResult.get(taskResultId)?.get(attemptSlot(number));
      if (!a || a.number !== number || a.deliveryId !== deliveryId || a.outcome !== "under-way") return null;
      const detail = noReportDetail(a.agentName ?? a.agentId ?? "");
      Object.assign(a, { outcome: "failed", status: null, errorCode: NO_REPORT.code, detail, durationMs: Math.max(0, Date.parse(now) - Date.parse(a.startedAt)) });
      return detail;
    },
    async list(taskResultId, page) {
      const items = [...(byResult.get(taskResultId)?.values() ?? [])].sort(newestFirst);
      return { items: items.slice(page.offset, page.offset + page.limit).map(clone), total: items.length };
    },
    async prune(before, limit) {
      const old = [...all()].filter((a) => a.startedAt < before).sort((a, b) => newestFirst(b, a)).slice(0, limit);
      for (const a of old) {
        const slots = byResult.get(a.taskResultId)!;
        slots.delete(attemptSlot(a.number));
        if (slots.size === 0) byResult.delete(a.taskResultId);
      }
      return old.length;
    },
  };
}
