import type { GuardedResultWrite } from "../../storage/types.js";
import type { ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { delivery, result, rid, stage } from "./run-task-fixtures.js";

export const PENDING = { statuses: ["pending"] as const, version: 1 };
export const OPEN = ["pending", "running"] as const;
/** The fixtures the task stage cases share. */
export function taskStageHelpers(ctx: ConformanceContext) {
  const s = () => ctx.storage;
  const st = stage();
  const pre = stage({ id: rid("ts", 2), stage: "pre_plan", sequence: 0 });
  const r1 = result();
  const r2 = result({ id: rid("taskrs", 2), position: 1, enforcementLevel: "mandatory", taskName: "second" });

  /** The start of `st` as the core writes it: tokens issued, versions bumped, one delivery each. */
  const startWrites = (suffix = ""): { writes: GuardedResultWrite[]; deliveries: ReturnType<typeof delivery>[] } => {
    const writes = [r1, r2].map((r, i) => ({
      next: { ...r, accessTokenDigest: `digest-${i}${suffix}`, version: 2, updatedAt: at(5) },
      expected: PENDING,
    }));
    const deliveries = [r1, r2].map((r, i) => delivery({ id: rid("dlv", i + 1) + suffix, taskResultId: r.id }));
    return { writes, deliveries };
  };
  return { s, st, pre, r1, r2, startWrites };
}

export type TaskStageHelpers = ReturnType<typeof taskStageHelpers>;
