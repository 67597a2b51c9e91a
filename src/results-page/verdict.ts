import type { StageStatus } from "../schemas/run-tasks.js";

/**
 * The one-line verdict of a whole run, from its stages in run order. The tone names
 * the badge colour; the text says what a reader needs first: did the run pass its checks, and if
 * not, which stage is why.
 */

export const STAGE_NAMES = { pre_plan: "Pre-plan", post_plan: "Post-plan", pre_apply: "Pre-apply", post_apply: "Post-apply" } as const;

export interface VerdictStage {
  stage: keyof typeof STAGE_NAMES;
  status: StageStatus;
  overridden: boolean;
  /** Its `<status>-at` times: a stage without `running-at` never started (D47). */
  statusTimestamps?: Readonly<Record<string, string>>;
}

export interface Verdict {
  tone: "passed" | "failed" | "running" | "pending" | "awaiting_override";
  text: string;
}

const STOPPED: readonly StageStatus[] = ["failed", "errored", "canceled", "unreachable"];
const name = (s: VerdictStage): string => `the ${STAGE_NAMES[s.stage].toLowerCase()} stage`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** decision D47: a stage the run never reached (made `unreachable` without ever starting). */
export const notReached = (s: VerdictStage): boolean => s.status === "unreachable" && s.statusTimestamps?.["running-at"] === undefined;

/** How a stopped stage ended, as the end of a sentence: `failed`, `errored`, `was canceled`, `was unreachable`. */
const ENDED: Partial<Record<StageStatus, string>> = { failed: "failed", errored: "errored", canceled: "was canceled", unreachable: "was unreachable" };

/**
 * decision D47: the stage that stopped the run, or null when the run ended before any did (the
 * host's `endRun`): the first stopped stage that did start, else nothing.
 */
export function stoppedAt(stages: readonly VerdictStage[]): VerdictStage | null {
  return stages.find((s) => STOPPED.includes(s.status) && !notReached(s)) ?? null;
}

/** decision D47: why a stage the run never reached did not run, in words. */
export const notReachedText = (stages: readonly VerdictStage[]): string => {
  const at = stoppedAt(stages);
  return at ? `Not reached: the run stopped at ${STAGE_NAMES[at.stage].toLowerCase()}.` : "Not reached: the run ended before this stage.";
};

/** `waitingFor`: what a running stage waits for instead of its run tasks (decision D34: an agent of a pool). */
export function runVerdict(stages: readonly VerdictStage[], waitingFor?: string): Verdict {
  if (stages.length === 0) return { tone: "pending", text: "No run task stages: nothing was checked." };
  const stopped = stoppedAt(stages);
  if (stopped) return { tone: "failed", text: `Did not pass: ${name(stopped)} ${ENDED[stopped.status]}.` };
  const ended = stages.find(notReached);
  if (ended) return { tone: "failed", text: `Did not pass: the run ended before ${name(ended)}.` };
  const waiting = stages.find((s) => s.status === "awaiting_override");
  if (waiting) return { tone: "awaiting_override", text: `Waiting for an override: ${name(waiting)} failed a mandatory check.` };
  const running = stages.find((s) => s.status === "running");
  if (running) return { tone: "running", text: `Running: ${name(running)} is ${waitingFor ?? "waiting for its run tasks"}.` };
  const passed = stages.filter((s) => s.status === "passed");
  const overridden = passed.filter((s) => s.overridden).length;
  const note = overridden > 0 ? ` (${plural(overridden, "override")})` : "";
  if (passed.length === stages.length) {
    return { tone: "passed", text: `Passed: ${stages.length === 1 ? "its one stage" : `all ${stages.length} stages`} passed${note}.` };
  }
  const next = stages.find((s) => s.status === "pending")!;
  return { tone: "pending", text: `In progress: ${passed.length} of ${plural(stages.length, "stage")} passed${note}; ${name(next)} has not started.` };
}
