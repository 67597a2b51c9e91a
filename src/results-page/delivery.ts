import { maxAttemptsBefore } from "../delivery/retry-schedule.js";
import { ATTEMPT_LIMITS, type DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import type { ResultStatus } from "../schemas/run-tasks.js";
import type { TaskResultView, TaskStageView } from "../schemas/task-stage-views.js";
import type { DeliveryStatus } from "../services/delivery-status.js";
import { NO_AGENT_PREFIX } from "../services/pool-presence.js";
import { NO_REPORT } from "../storage/outbox-rules.js";
import type { ResultsPageSource } from "./types.js";
import { notReached } from "./verdict.js";

/**
 * decision D31: what the page tells of a result whose integration is failing: a request being
 * retried, one with no attempt left before the deadline (D16), or a result that ended
 * `unreachable` or `errored`; with the attempts kept for it, newest first.
 */

export type DeliveryState =
  /** `attempt`: attempts made; `bound`: the most there can be by the deadline (D15's schedule, D16). */
  | { kind: "retrying"; attempt: number; bound: number; nextAt: string; underWay: boolean; deadlineAt: string }
  /** Still `pending`, but the next wait would end past the deadline: the sweep makes it unreachable then. */
  | { kind: "exhausted"; attempt: number; deadlineAt: string }
  | { kind: "ended"; status: "unreachable" | "errored" }
  /** decision D58: a first attempt an agent took, no report yet (not failing: shown from the hand-out). */
  | { kind: "handed"; attempt: number };

export interface DeliveryModel {
  state: DeliveryState;
  /** The instance's clock when read: "next try in 40 s" is measured from it. */
  now: string;
  /** The newest attempts kept (at most 20), newest first, and how many are kept. */
  attempts: DeliveryAttemptRecord[];
  total: number;
  lastError: string | null;
  /** decision D34: the result ended because no agent of its pool took the request (nothing was sent). */
  noAgent: boolean;
  /** decision D34: the `--name` of the agents that sent the attempts shown, by id. */
  agentNames?: Record<string, string>;
  /** decision D63: the integrations' answers are left out (the caller does not manage run tasks). */
  answersHidden?: boolean;
}

/** decision D34: a result that ended because no agent of its pool took the request says so in its message. */
export const endedWithoutAgent = (r: Pick<TaskResultView, "status" | "message">): boolean =>
  r.status === "unreachable" && (r.message?.startsWith(NO_AGENT_PREFIX) ?? false);

const ENDED: readonly ResultStatus[] = ["unreachable", "errored"];
/** Results whose delivery can be failing: asked about; any other status never is. */
const WATCHED: readonly ResultStatus[] = ["pending", ...ENDED];

/** Pure: the failing state of a result's request, or null when its integration is not failing. */
export function deliveryState(s: DeliveryStatus): FailingState | null {
  if (s.resultStatus === "unreachable" || s.resultStatus === "errored") return { kind: "ended", status: s.resultStatus };
  // Not yet sent, first attempt under way, or accepted: nothing has failed.
  if (s.resultStatus !== "pending" || s.deadlineAt === null || s.delivered || s.attempts === 0) return null;
  const deadline = Date.parse(s.deadlineAt);
  if (s.nextAt === null || Date.parse(s.now) >= deadline) return { kind: "exhausted", attempt: s.attempts, deadlineAt: s.deadlineAt };
  // An attempt under way was due at `nextAt` and started no earlier: counting from there stays an upper bound.
  const bound = maxAttemptsBefore(s.attempts, Date.parse(s.nextAt), deadline);
  return { kind: "retrying", attempt: s.attempts, bound, nextAt: s.nextAt, underWay: s.underWay, deadlineAt: s.deadlineAt };
}

/**
 * decision D58: a pool result's first attempt is worth reading while an agent holds it (it is a
 * record from the hand-out on); a direct one's, or one with attempts counted, is not asked here.
 */
const mayBeHanded = (s: DeliveryStatus, result: { agentPoolId?: string | null }): boolean =>
  !!result.agentPoolId && s.resultStatus === "pending" && s.attempts === 0 && !s.delivered;

/**
 * The delivery model of a result whose integration is failing, or (decision D58) whose first
 * attempt an agent took and has not reported; else null.
 */
export async function loadDelivery(source: ResultsPageSource, result: Pick<TaskResultView, "id" | "status" | "message"> & Partial<Pick<TaskResultView, "agentPoolId">>): Promise<DeliveryModel | null> {
  if (!WATCHED.includes(result.status)) return null;
  const status = await source.runTasks.deliveryStatus(result.id);
  const failing = status ? deliveryState(status) : null;
  if (!status || (!failing && !mayBeHanded(status, result))) return null;
  const { items, total } = await source.runTasks.listDeliveryAttempts(result.id, { offset: 0, limit: ATTEMPT_LIMITS.perResult });
  if (!failing && items[0]?.outcome !== "under-way") return null;
  const state: DeliveryState = failing ?? { kind: "handed", attempt: items[0]!.number };
  const agentIds = items.flatMap((a) => (a.agentId ? [a.agentId] : []));
  const agentNames = agentIds.length > 0 ? await source.runTasks.agentNames(agentIds) : {};
  return { state, now: status.now, attempts: items, total, lastError: status.lastError, noAgent: endedWithoutAgent(result), agentNames };
}

/** One failing integration of a run, for the runs lists' mark: `scanner: retrying`. */
export interface FailingIntegration {
  taskName: string;
  state: Exclude<DeliveryState["kind"], "ended" | "handed"> | "unreachable" | "errored" | "no-agent" | "agent-lost";
}

/**
 * decision D58: a result retried because the agent that held its request never reported (killed,
 * cut off): the agent failed, not the integration, whatever it answered before.
 */
const lostByAgent = (lastError: string | null): boolean => lastError?.startsWith(NO_REPORT.before) ?? false;

/** Marks that are the agents' doing, not the integration's: nothing says the integration fails. */
export const isAgentSide = (f: Pick<FailingIntegration, "state">): boolean => f.state === "no-agent" || f.state === "agent-lost";

/** A failing state (decision D58: an attempt handed to an agent is not one). */
export type FailingState = Exclude<DeliveryState, { kind: "handed" }>;
export const isFailing = (state: DeliveryState): state is FailingState => state.kind !== "handed";

/** How the runs lists and the verdict name a failing state. */
export const markOf = (state: FailingState, noAgent = false, lastError: string | null = null): FailingIntegration["state"] =>
  noAgent ? "no-agent" : state.kind === "ended" ? state.status : state.kind === "retrying" && lostByAgent(lastError) ? "agent-lost" : state.kind;

/**
 * The failing integrations of a run from its stages: a started stage's results that ended
 * unreachable or errored, and its pending ones whose request is being retried (or has no attempt
 * left). A stage not started yet, or never reached, has sent nothing, so it is not read.
 */
export async function failingIntegrations(source: ResultsPageSource, stages: readonly TaskStageView[]): Promise<FailingIntegration[]> {
  // decision D47: a stage the run never reached sent nothing either.
  const started = stages.filter((s) => s.status !== "pending" && !notReached(s));
  const results = (await Promise.all(started.map((s) => source.runTasks.listResults(s.id)))).flat();
  const marks = await Promise.all(
    results.map(async (r): Promise<FailingIntegration | null> => {
      if (ENDED.includes(r.status)) return { taskName: r.taskName, state: endedWithoutAgent(r) ? "no-agent" : (r.status as "unreachable" | "errored") };
      if (r.status !== "pending") return null;
      const status = await source.runTasks.deliveryStatus(r.id);
      const state = status ? deliveryState(status) : null;
      return state ? { taskName: r.taskName, state: markOf(state, false, status!.lastError) } : null;
    }),
  );
  return marks.filter((m): m is FailingIntegration => m !== null);
}
