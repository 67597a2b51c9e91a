import type { ClaimedDelivery } from "../storage/types.js";
import type { AttemptObservation } from "../services/delivery-attempts.js";
import type { DeliveryAttempt, TaskDeliveryService } from "../services/task-deliveries.js";
import type { HttpResponse, HttpTransport } from "./egress.js";
import { answerWords, failureCode, failureReason, statusReason, statusText, WORDS_IN_REASON } from "./failure-reason.js";
import { parseRetryAfter, RETRY_AFTER_STATUSES, retryDelayMs } from "./retry-schedule.js";
import { AgentUnavailableError, agentOf, isAgentUnavailable } from "./agent-transport.js";
import { NO_REPORT, noReportDetail } from "../storage/outbox-rules.js";
import { outcomeClassOf, type AttemptEnd, type AttemptOutcome, type BeginAttempt } from "./attempt-telemetry.js";

/**
 * Named points where a test hook may stop the process (crash-safety tests). Production passes no
 * hook. `after-enqueue` sits in the host's code around `runTasks.startStage`, not here.
 * `after-settle-batch` fires once an attempt's batched settlement is stored, before the next one.
 */
export const DISPATCHER_FAILPOINTS = [
  "after-claim",
  "after-send-before-record",
  "during-retry-scheduling",
  "after-settle-batch",
  "during-sweep",
] as const;
export type DispatcherFailpoint = (typeof DISPATCHER_FAILPOINTS)[number];

export type Outcome = "skipped" | "delivered" | "failed" | "released";

// What a 200 ends an attempt with, the same every time (the telemetry only reads it).
const ANSWERED_200: AttemptEnd = Object.freeze({ status: 200, outcomeClass: "2xx" });

export interface AttemptDeps {
  deliveries: TaskDeliveryService;
  transport: HttpTransport;
  random: () => number;
  failpoint: (name: DispatcherFailpoint) => void | Promise<void>;
  /** Logs, counts and traces each attempt. */
  begin: BeginAttempt;
}

/**
 * One attempt of one claimed row (decisions D14, D15); every path ends with the row closed,
 * rescheduled or released. Only an exact 200 counts, whatever the body (the egress keeps at most
 * 64 KiB of it); a body still arriving when the 10 s budget ends is a timeout like any other.
 * `sent` is called once the network part is over (answered, failed, or not needed), before the
 * answer is recorded: the dispatcher's slot is free for the next request while the record waits
 * for its batch, so the commit time never holds a slot.
 */
export async function runAttempt(deps: AttemptDeps, claimed: ClaimedDelivery, signal: AbortSignal, sent: () => void = () => undefined): Promise<Outcome> {
  const watch = deps.begin(claimed.row);
  let ended = false;
  const end = (outcome: AttemptOutcome, detail?: AttemptEnd): void => {
    if (!ended) (ended = true), watch.end(outcome, detail);
  };
  try {
    return await attempt(deps, claimed, signal, sent, end);
  } finally {
    // A storage or keyring failure on the way: the dispatcher releases the row and logs why.
    end("released");
  }
}

async function attempt(
  deps: AttemptDeps,
  claimed: ClaimedDelivery,
  signal: AbortSignal,
  sent: () => void,
  end: (outcome: AttemptOutcome, detail?: AttemptEnd) => void,
): Promise<Outcome> {
  const { deliveries, failpoint } = deps;
  // A failpoint is awaited only when a test's hook returned a promise: three awaits an attempt otherwise.
  const hook = failpoint("after-claim");
  if (hook) await hook;
  const prepared = await deliveries.prepare(claimed);
  if (!prepared) return (sent(), end("skipped"), "skipped");
  // decision D31: what this attempt saw, recorded with its settlement.
  const startedAt = deliveries.now();
  const began = performance.now();
  const seen = (o: Omit<AttemptObservation, "startedAt" | "durationMs">): AttemptObservation => ({ startedAt, durationMs: performance.now() - began, ...o });
  let status: number | undefined;
  const fail = async (error: string, retryAfterMs: number | null, observed: AttemptObservation, now = false): Promise<Outcome> => {
    await failpoint("during-retry-scheduling");
    const delayMs = now ? 0 : retryDelayMs(prepared.row.attempt + 1, deps.random, retryAfterMs);
    const result = await deliveries.fail(prepared, { error, delayMs, observed });
    const nextAttemptAt = result === "retry" ? new Date(deliveries.now().getTime() + delayMs).toISOString() : undefined;
    end(result, { ...(status === undefined ? {} : { status }), error, ...(nextAttemptAt ? { nextAttemptAt } : {}), outcomeClass: outcomeClassOf(observed) });
    await failpoint("after-settle-batch");
    return "failed";
  };
  // decision D40: a key this host lacks: the row is left to the hosts holding it, no attempt spent.
  if (!prepared.ready && prepared.lacksKey) return (sent(), await deliveries.leave(prepared.row, prepared.lacksKey), end("released"), "released");
  if (!prepared.ready && prepared.taskDeleted) return (sent(), await abandon(deps, prepared, seen({ outcome: "skipped", status: null, errorCode: null, detail: prepared.error })), end("skipped", { error: prepared.error }), "skipped");
  if (!prepared.ready) return (sent(), fail(prepared.error, null, seen({ outcome: "skipped", status: null, errorCode: null, detail: prepared.error })));
  let failure: { error: string; retryAfterMs: number | null } | null = null;
  let observed: AttemptObservation;
  const handed = handedRecord(deliveries, prepared, seen);
  try {
    const pool = claimed.row.agentPoolId;
    const res = await deps.transport.send(pool ? { ...prepared.request, signal, agentPoolId: pool, handing: handed.handing } : { ...prepared.request, signal });
    status = res.status;
    observed = handed.seen({ outcome: "answered", status, errorCode: null, detail: statusReason(status), response: answerOf(res), ...(res.agentId ? { agentId: res.agentId } : {}) });
    if (res.status !== 200) {
      const retryAfter = RETRY_AFTER_STATUSES.has(res.status) ? parseRetryAfter(res.headers["retry-after"], deliveries.now()) : null;
      // D31: the integration's own words follow (`responded with 404: unsupported plan format ...`).
      failure = { error: statusReason(res.status, answerWords(res, prepared.secrets, WORDS_IN_REASON)), retryAfterMs: retryAfter };
    }
  } catch (err) {
    // Abandoned by stop(): the row goes back as it was; the next owner sends it again.
    // decision D45: an agent held the job and never reported it: an attempt (the integration may
    // have received it), closed so, and the next one due at once for another agent of the pool.
    const lost = isAgentUnavailable(err) && !signal.aborted ? err.agent : undefined;
    if (lost) {
      sent();
      const error = noReportDetail(lost.name ?? lost.id);
      return fail(error, null, handed.seen({ outcome: "failed", status: null, errorCode: NO_REPORT.code, detail: error, agentId: lost.id }), true);
    }
    // decision D34: no agent took the job: not an attempt, the row goes back at once.
    if (signal.aborted || isAgentUnavailable(err)) return (sent(), await deliveries.release(claimed.row), end("released"), "released");
    failure = { error: failureReason(err), retryAfterMs: null };
    const agentId = agentOf(err);
    observed = handed.seen({ outcome: "failed", status: null, errorCode: failureCode(err), detail: failure.error, ...(agentId ? { agentId } : {}) });
  }
  sent();
  const recording = failpoint("after-send-before-record");
  if (recording) await recording;
  if (failure !== null) return fail(failure.error, failure.retryAfterMs, observed);
  const held = await deliveries.succeed(prepared as DeliveryAttempt, observed);
  end(held ? "delivered" : "lost", ANSWERED_200);
  const settled = failpoint("after-settle-batch");
  if (settled) await settled;
  return "delivered";
}

type Seen = (o: Omit<AttemptObservation, "startedAt" | "durationMs">) => AttemptObservation;

/**
 * decision D58: the hand-out of a pool's job writes its attempt's `under-way` record before the
 * agent gets it (naming the agent); what the attempt then sees completes that record in place (its
 * id and the agent's name carried on). A claim replaced meanwhile: the job is not handed out.
 */
function handedRecord(deliveries: AttemptDeps["deliveries"], prepared: DeliveryAttempt, seen: Seen) {
  let record: { id: string; agentName: string | null } | undefined;
  const handing = async (agent: { id: string; name: string | null }): Promise<void> => {
    const detail = `handed to agent ${agent.name ?? agent.id}; no report yet`;
    const id = await deliveries.handOut(prepared, seen({ outcome: "under-way", status: null, errorCode: null, detail, agentId: agent.id, agentName: agent.name }));
    // Not written: another claim holds the row now; no agent gets the job (the row is not ours).
    if (id === null) throw new AgentUnavailableError("no-agent");
    record = { id, agentName: agent.name };
  };
  const seenHanded: Seen = (o) => seen(record ? { ...o, recordId: record.id, agentName: record.agentName } : o);
  return { handing, seen: seenHanded };
}

/** What a result says when its run task was deleted before its request could be sent. */
export const TASK_DELETED_MESSAGE = "Task request was not sent: its run task was deleted.";

/**
 * The run task was deleted: its request can never be sent. The row closes with the attempt recorded
 * (no retry: retries were 16 integration failures over 10 minutes), the result ends `unreachable`
 * now, and its stage is recomputed. Not an integration failure: not counted in health, not an error.
 */
async function abandon(deps: AttemptDeps, prepared: DeliveryAttempt, observed: AttemptObservation): Promise<void> {
  const { deliveries } = deps;
  // A delay reaching the deadline makes `fail` close the row rather than schedule a retry.
  const delayMs = Math.max(0, Date.parse(prepared.deadlineAt) - deliveries.now().getTime());
  if ((await deliveries.fail(prepared, { error: prepared.ready ? "" : prepared.error, delayMs, observed })) === "lost") return;
  if (await deliveries.giveUp(prepared.row.taskResultId, TASK_DELETED_MESSAGE)) await deliveries.settle(prepared.row.stageId);
}

/** Why no body was kept (decision D38): the platform's allowlist, or the agent's own egress (D34). */
const WITHHELD_BY_EGRESS = "body not kept: the destination is reached through the egress allowlist";
const WITHHELD_BY_AGENT = "body not kept by the agent's own egress: it keeps only the status line of an answer from a private address";

/**
 * The answer as an attempt's record reads it; a host's transport may spell header names in any case.
 * decision D38: an answer whose body the egress did not keep is recorded as its status line.
 */
function answerOf(res: HttpResponse): NonNullable<AttemptObservation["response"]> {
  if (res.bodyWithheld) return { body: `HTTP ${statusText(res.status)} (${res.agentId ? WITHHELD_BY_AGENT : WITHHELD_BY_EGRESS})`, contentType: "text/plain", truncated: false };
  let type: string | undefined;
  for (const name of Object.keys(res.headers)) {
    if (name.toLowerCase() === "content-type") {
      type = res.headers[name];
      break;
    }
  }
  return { body: res.body, contentType: type, truncated: res.bodyTruncated };
}
