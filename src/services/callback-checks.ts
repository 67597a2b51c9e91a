import { safeEqual, sha256Hex } from "../crypto/random.js";
import { SEVERITY_RANK, severityLevelOf, severityOf, statusOf } from "../domain/outcomes.js";
import { invalid } from "../errors.js";
import type { TaskResultOutcomeRecord, TaskResultRecord } from "../schemas/run-task-records.js";
import { CallbackSchema, RESULT_LIMITS, type CallbackInput, type OutcomeInput } from "../schemas/run-tasks.js";
import type { Storage } from "../storage/types.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskSettings } from "./run-task-settings.js";

/** What a callback is checked against and what it writes (D16-D18, D26, D28). */

// decision D16: the window opens at the first delivery attempt; before it there is no deadline.
export const expired = (r: TaskResultRecord, now: Date): boolean => r.deadlineAt !== null && now.getTime() >= Date.parse(r.deadlineAt);
export const tokenMatches = (r: TaskResultRecord, token: string | null): boolean =>
  token !== null && r.accessTokenDigest !== null && safeEqual(sha256Hex(token), r.accessTokenDigest);

/** Lower-case label of the enriched tag: what `filter[severity]`/`filter[status]` match (D18). */
const label = (entry: { label: string } | null): string | null => (entry === null ? null : entry.label.toLowerCase());

export const toOutcomeRecord = (newId: ServiceContext["newId"], resultId: string, position: number, o: OutcomeInput, at: string): TaskResultOutcomeRecord => ({
  id: newId("tro"),
  taskResultId: resultId,
  position,
  outcomeId: o.outcomeId,
  description: o.description,
  body: o.body ?? null,
  url: o.url ?? null,
  tags: o.tags,
  severityLabel: label(severityOf(o.tags)),
  severityRank: SEVERITY_RANK[severityLevelOf(o.tags)],
  statusLabel: label(statusOf(o.tags)),
  createdAt: at,
});

const OUTCOMES_POINTER = "/data/relationships/outcomes/data";
/**
 * decision D26: at most 1,000 outcomes and 10 MiB of outcome bodies per result, checked against
 * `current`, the version the write then compares-and-sets on (and the body sum read after it;
 * see `TaskResultOutcomeStore.bodyBytes`): racing callbacks cannot together go beyond.
 */
export async function checkResultLimits(s: Storage, current: TaskResultRecord, added: readonly OutcomeInput[]): Promise<void> {
  if (added.length === 0) return;
  if (current.outcomesCount + added.length > RESULT_LIMITS.outcomes) {
    throw invalid(
      OUTCOMES_POINTER,
      `A task result holds at most 1,000 outcomes: it has ${current.outcomesCount} and this callback adds ${added.length}`,
    );
  }
  const addedBytes = added.reduce((sum, o) => sum + (o.body === undefined ? 0 : Buffer.byteLength(o.body, "utf8")), 0);
  if (addedBytes === 0) return;
  const storedBytes = await s.taskResultOutcomes.bodyBytes(current.id);
  if (storedBytes + addedBytes > RESULT_LIMITS.bodyBytes) {
    throw invalid(
      OUTCOMES_POINTER,
      `A task result holds at most 10 MiB of outcome bodies: it has ${storedBytes} bytes and this callback adds ${addedBytes}`,
    );
  }
}

/** decision D16: with the idle rule a `running` callback restarts the window, capped at the max. */
export function nextDeadline(rule: RunTaskSettings["deadline"], r: TaskResultRecord, status: CallbackInput["status"], now: Date): string | null {
  if (rule.kind !== "idle" || status !== "running" || r.deadlineMaxAt === null) return r.deadlineAt;
  return new Date(Math.min(now.getTime() + rule.idleMs, Date.parse(r.deadlineMaxAt))).toISOString();
}

/**
 * decision D28: a write answered 503 may have been committed (the connection cut after COMMIT), and
 * the integration then sends its final callback again. That callback, the very one stored (same
 * status, message and url where it gives them, and exactly the outcomes stored with the final
 * status), is answered 200 and changes nothing; any other callback to a final result stays 409.
 */
export async function isStoredRepeat(s: Storage, stored: TaskResultRecord, body: unknown): Promise<boolean> {
  const parsed = CallbackSchema.safeParse(body);
  if (!parsed.success) return false;
  const input = parsed.data;
  if (input.status !== stored.status) return false;
  if ((input.message !== undefined && input.message !== stored.message) || (input.url !== undefined && input.url !== stored.url)) return false;
  // The final callback's outcomes are those stamped with its time; one more is read to see where they start.
  const take = Math.min(input.outcomes.length + 1, stored.outcomesCount);
  const tail = await s.taskResultOutcomes.list(stored.id, { sort: "position" }, { offset: stored.outcomesCount - take, limit: take });
  const own = tail.items.filter((o) => o.createdAt === stored.updatedAt);
  const same = (o: TaskResultOutcomeRecord, i: OutcomeInput): boolean =>
    o.outcomeId === i.outcomeId && o.description === i.description && o.body === (i.body ?? null) && o.url === (i.url ?? null) && JSON.stringify(o.tags) === JSON.stringify(i.tags);
  return own.length === input.outcomes.length && own.every((o, n) => same(o, input.outcomes[n]!));
}
