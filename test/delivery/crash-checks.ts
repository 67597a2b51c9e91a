import { expect } from "vitest";
import { FINAL_RESULT_STATUSES, stageStatusOf } from "../../src/domain/stage-machine.js";
import type { Runplane } from "../../src/index.js";
import type { TaskResultRecord } from "../../src/schemas/run-task-records.js";
import type { Storage } from "../../src/storage/types.js";
import { callbackBody } from "../helpers/run-tasks.js";
import type { Behaviour, Receiver } from "./processes.js";

/**
 * What the crash-safety tests (SQLite here, PostgreSQL in test/multihost) share: three
 * integrations and the checks after a crash and a restart. One integration calls back `passed`
 * before it answers 200, one answers 200 and never calls back (errored at the deadline), one
 * answers 500 (unreachable at the deadline).
 */
export const CRASH_FAILPOINTS = ["after-enqueue", "after-claim", "after-send-before-record", "during-retry-scheduling", "after-settle-batch", "during-sweep"] as const;

export const isFinal = (r: TaskResultRecord): boolean => (FINAL_RESULT_STATUSES as readonly string[]).includes(r.status);

/** The receiver's paths: `/ok` calls back through `parent` (the API any host serves). */
export const crashIntegrations = (parent: () => Runplane): Record<string, Behaviour> => ({
  "/ok": async (body) => {
    const res = await parent().handler(
      new Request(body.task_result_callback_url.replace("https://runplane.example", "http://localhost"), {
        method: "PATCH",
        headers: { authorization: `Bearer ${body.access_token}`, "content-type": "application/vnd.api+json" },
        body: JSON.stringify(callbackBody("passed")),
      }),
    );
    // Already final after an earlier life's callback: the request was a duplicate.
    return res.status === 200 || res.status === 409 ? 200 : 500;
  },
  "/silent": () => 200,
  "/down": () => 500,
});

export const resultsOf = async (storage: Storage, stageIds: string[]): Promise<TaskResultRecord[]> =>
  (await Promise.all(stageIds.map((id) => storage.taskResults.listByStage(id)))).flat();

/**
 * After the restart: every result final (two of each kind), none of those final after the crash
 * changed, each stage agreeing with its results, every row closed with no lease, and every request
 * that went out recorded as an attempt except at most one per result lost to the crash, all with
 * the same bytes for the same task_result_id.
 */
export async function expectRecovered(storage: Storage, receiver: Receiver, stageIds: string[], finalAfterCrash: TaskResultRecord[], failpoint: string): Promise<void> {
  const end = await resultsOf(storage, stageIds);
  expect(end).toHaveLength(6);
  expect(end.map((r) => r.status).sort()).toStrictEqual(["errored", "errored", "passed", "passed", "unreachable", "unreachable"]);
  for (const before of finalAfterCrash) expect(end.find((r) => r.id === before.id)).toStrictEqual(before);
  for (const stageId of stageIds) {
    const stage = await storage.taskStages.get(stageId);
    const own = end.filter((r) => r.stageId === stageId);
    expect(stage?.status).toBe(stageStatusOf(own, { overridable: false, started: true }));
  }

  let extra = 0;
  for (const result of end) {
    const sent = receiver.posts.get(result.id) ?? [];
    const [row] = await storage.taskDeliveries.listByResult(result.id);
    expect(row?.closedAt, result.id).not.toBeNull();
    expect(row?.leaseOwner).toBeNull();
    expect(sent.length).toBeGreaterThanOrEqual(1);
    // Every request that went out is recorded as an attempt, except one lost to the crash.
    const unrecorded = sent.length - row!.attempt;
    expect(unrecorded === 0 || unrecorded === 1, `${result.id}: ${sent.length} sent, ${row!.attempt} recorded`).toBe(true);
    extra += unrecorded;
    for (const bytes of sent) {
      expect(bytes.equals(sent[0]!)).toBe(true);
      expect(JSON.parse(bytes.toString("utf8")).task_result_id).toBe(result.id);
    }
  }
  // Attempts run concurrently, so one crash may cut several short: each of them at most once.
  if (failpoint === "after-send-before-record" || failpoint === "during-retry-scheduling") expect(extra).toBeGreaterThanOrEqual(1);
}
