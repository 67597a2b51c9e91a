import type { CallbackStatus, EnforcementLevel, ResultStatus, StageStatus } from "../schemas/run-tasks.js";

/**
 * Task stage and task result state machine (decisions D13, D16). Pure: the caller passes the
 * time, and persists the answer with one compare-and-set on the status it read.
 */

/** `awaiting_override` becomes `awaiting-override-at` (D9: hyphenated `<status>-at` keys). */
export type TimestampKey<S extends string> = S extends `${infer A}_${infer B}` ? `${A}-${TimestampKey<B>}` : `${S}-at`;
export type StatusTimestamps<S extends string> = Partial<Record<TimestampKey<S>, string>>;
/** A stage's map also records `overridden-at`, the override's own time (D36): not a status. */
export type StageTimestamps = StatusTimestamps<StageStatus> & { "overridden-at"?: string };
export type ResultTimestamps = StatusTimestamps<ResultStatus>;

export const timestampKey = <S extends string>(status: S): TimestampKey<S> =>
  `${status.replaceAll("_", "-")}-at` as TimestampKey<S>;

/** The key the override stamps (D36): the stage's status becomes `running` again but `running-at` keeps its first time. */
export const OVERRIDDEN_AT = "overridden-at";

/**
 * RFC 3339 with an offset and milliseconds (D36, was whole seconds under D9): events of one second
 * keep their order. go-tfe parses fractions; stored values without one still parse.
 */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 23)}+00:00`;
}

/** Message stored on a result whose deadline passed (decision D16). */
export const TIMED_OUT_MESSAGE = "Task result timed out.";

export const FINAL_RESULT_STATUSES = ["passed", "failed", "errored", "canceled", "unreachable"] as const satisfies
  readonly ResultStatus[];
export const FINAL_STAGE_STATUSES = ["passed", "failed", "errored", "canceled", "unreachable"] as const satisfies
  readonly StageStatus[];

export const isFinalResultStatus = (status: ResultStatus): boolean =>
  (FINAL_RESULT_STATUSES as readonly ResultStatus[]).includes(status);
export const isFinalStageStatus = (status: StageStatus): boolean =>
  (FINAL_STAGE_STATUSES as readonly StageStatus[]).includes(status);

/**
 * decision D47: the final stage statuses that stop the run (every one but `passed`): a mandatory
 * failure, an error, an unreachable integration or a cancel. No later stage of the run then runs.
 */
export const stopsTheRun = (status: StageStatus): boolean => status !== "passed" && isFinalStageStatus(status);

export interface ResultView {
  status: ResultStatus;
  enforcementLevel: EnforcementLevel;
  /** Set on a failed result once a user overrode the stage; it then no longer blocks. */
  overridden?: boolean;
}

export interface StageStatusOptions {
  /** Option `overridableTasks` (default off): a mandatory failure waits for an override. */
  overridable: boolean;
  started: boolean;
}

/**
 * The stage status as a function of its results (decision D13). Only mandatory results can block.
 * Canceled results: a canceled run cancels the stage through the `cancel` event, so this function
 * only meets them in odd cases (a result canceled on its own); a mandatory canceled result then
 * blocks with `canceled`, ranked after failed, errored and unreachable; an advisory one is ignored.
 */
export function stageStatusOf(results: readonly ResultView[], options: StageStatusOptions): StageStatus {
  if (!options.started) return "pending";
  if (results.some((r) => r.status === "pending" || r.status === "running")) return "running";
  const blocking = results.filter((r) => r.enforcementLevel === "mandatory" && r.overridden !== true);
  const has = (status: ResultStatus): boolean => blocking.some((r) => r.status === status);
  if (has("failed")) return options.overridable ? "awaiting_override" : "failed";
  if (has("errored")) return "errored";
  if (has("unreachable")) return "unreachable";
  if (has("canceled")) return "canceled";
  return "passed";
}

export type ResultEvent =
  | { type: "deliver-ok" }
  | { type: "callback"; status: CallbackStatus }
  /** Pending means no 200 and no callback ever arrived: unreachable; running means errored (D16). */
  | { type: "deadline" }
  | { type: "cancel" }
  /** decision D47: the run stopped or ended before the result's stage started: it could not be executed. */
  | { type: "not-reached" };

export type StageEvent =
  | { type: "start" }
  | { type: "result"; results: readonly ResultView[]; overridable: boolean }
  | { type: "override" }
  | { type: "cancel" }
  /** decision D47: the run stopped at an earlier stage, or the host ended it, before this stage started. */
  | { type: "not-reached" };

type Edges<S extends string, E extends string> = Record<S, Partial<Record<E, readonly S[]>>>;

/** Every allowed edge; a final status has none, so nothing can leave it. */
const RESULT_TRANSITIONS = {
  pending: {
    "deliver-ok": ["running"],
    callback: ["running", "passed", "failed"],
    deadline: ["unreachable"],
    cancel: ["canceled"],
    "not-reached": ["unreachable"],
  },
  // A `running` callback may repeat; a 200 can arrive after the integration already called back.
  running: {
    "deliver-ok": ["running"],
    callback: ["running", "passed", "failed"],
    deadline: ["errored"],
    cancel: ["canceled"],
  },
  passed: {},
  failed: {},
  errored: {},
  canceled: {},
  unreachable: {},
} as const satisfies Edges<ResultStatus, ResultEvent["type"]>;

const STAGE_TRANSITIONS = {
  pending: { start: ["running"], cancel: ["canceled"], "not-reached": ["unreachable"] },
  running: {
    result: ["running", "passed", "failed", "awaiting_override", "errored", "unreachable", "canceled"],
    cancel: ["canceled"],
  },
  // Only an override or a cancel leaves it; recomputing here would let a caller skip the override.
  awaiting_override: { override: ["running"], cancel: ["canceled"] },
  passed: {},
  failed: {},
  errored: {},
  canceled: {},
  unreachable: {},
} as const satisfies Edges<StageStatus, StageEvent["type"]>;

export interface Current<S extends string> {
  status: S;
  statusTimestamps: StatusTimestamps<S>;
}

export type TransitionResult<S extends string, E extends string> =
  | { ok: true; status: S; statusTimestamps: StatusTimestamps<S>; changed: boolean }
  | { ok: false; code: "transition-not-allowed"; from: S; event: E };

function apply<S extends string, E extends string>(
  table: Edges<S, E>,
  current: Current<S>,
  event: E,
  choose: (targets: readonly S[]) => S | undefined,
  at: Date,
): TransitionResult<S, E> {
  const allowed: readonly S[] = table[current.status][event] ?? [];
  const target = allowed.length === 0 ? undefined : choose(allowed);
  if (target === undefined || !allowed.includes(target)) {
    return { ok: false, code: "transition-not-allowed", from: current.status, event };
  }
  if (target === current.status) {
    return { ok: true, status: target, statusTimestamps: current.statusTimestamps, changed: false };
  }
  const stamps = current.statusTimestamps as Record<string, string | undefined>;
  // D36: the override stamps only what it changes, its own time; the first `running-at` stays.
  const key = event === "override" ? OVERRIDDEN_AT : timestampKey(target);
  return {
    ok: true,
    status: target,
    statusTimestamps: { ...current.statusTimestamps, [key]: monotonic(stamps, at) },
    changed: true,
  };
}

/** A new status time is never earlier than one already recorded: clocks of two workers differ. */
function monotonic(stamps: Record<string, string | undefined>, at: Date): string {
  let latest = at.getTime();
  for (const value of Object.values(stamps)) {
    const time = value === undefined ? Number.NaN : Date.parse(value);
    if (time > latest) latest = time;
  }
  return rfc3339(new Date(latest));
}

export function transitionResult(
  current: Current<ResultStatus>,
  event: ResultEvent,
  at: Date,
): TransitionResult<ResultStatus, ResultEvent["type"]> {
  const choose = (targets: readonly ResultStatus[]) => (event.type === "callback" ? event.status : targets[0]);
  return apply<ResultStatus, ResultEvent["type"]>(RESULT_TRANSITIONS, current, event.type, choose, at);
}

export function transitionStage(
  current: Current<StageStatus>,
  event: StageEvent,
  at: Date,
): TransitionResult<StageStatus, StageEvent["type"]> {
  const choose = (targets: readonly StageStatus[]) =>
    event.type === "result"
      ? stageStatusOf(event.results, { overridable: event.overridable, started: true })
      : targets[0];
  return apply<StageStatus, StageEvent["type"]>(STAGE_TRANSITIONS, current, event.type, choose, at);
}
