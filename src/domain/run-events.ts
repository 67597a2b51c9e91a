import { createHash } from "node:crypto";
import type { CommentRecord } from "../schemas/run-comments.js";
import type { RunRecord, StatusTimestampMap } from "../schemas/run-task-records.js";
import type { RunStage } from "../schemas/run-tasks.js";
import { OVERRIDDEN_AT } from "./stage-machine.js";

/**
 * The events of a run that runplane knows (D36): its creation, every status each task stage
 * and each task result reached, an override, and every comment. HCP Terraform lists a run's events
 * at `GET /runs/:id/run-events` (go-tfe `RunEvent`: action, created-at, description, actor,
 * comment); runplane derives them from what it stores, so they need no storage of their own.
 * Their ids are stable and name their run (D36): `GET /run-events/:id` finds the run from the id.
 */

export interface RunEventTarget {
  type: "runs" | "task-stages" | "task-results" | "comments";
  id: string;
}

export interface RunEvent {
  id: string;
  action: string;
  description: string;
  /** UTC with `Z` (go-tfe reads `created-at` as iso8601). */
  createdAt: string;
  /** The user who acted, or null for runplane and the host. */
  actor: string | null;
  comment: string | null;
  target: RunEventTarget;
}

export interface RunEventStage {
  id: string;
  stage: RunStage;
  statusTimestamps: StatusTimestampMap;
  overridden: boolean;
  overrideComment: string | null;
  results: readonly { id: string; taskName: string; message: string | null; statusTimestamps: StatusTimestampMap }[];
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const EVENT_ID = /^re-([A-Za-z0-9_-]+)\.([0-9A-Za-z]{16})$/;

/**
 * A stable event id (D36): `re-`, the run id in base64url, `.`, and 16 base62 characters of a
 * digest of the run and the event. The same run and event always give the same id; the run id
 * may be any string the host chose, and base64url keeps the id to go-tfe's `[A-Za-z0-9._-]`.
 */
export function runEventId(runId: string, key: string): string {
  const digest = createHash("sha256").update(`${runId}\n${key}`).digest();
  let id = `re-${Buffer.from(runId, "utf8").toString("base64url")}.`;
  for (let i = 0; i < 16; i++) id += BASE62[digest[i]! % 62];
  return id;
}

/** The run an event id names, or null when it is not one (ids before D36 had no run in them). */
export function runIdOfEvent(eventId: string): string | null {
  const match = EVENT_ID.exec(eventId);
  if (!match) return null;
  const runId = Buffer.from(match[1]!, "base64url").toString("utf8");
  // Only the canonical spelling: one event has one id, and bytes that are not UTF-8 name no run.
  return runId !== "" && Buffer.from(runId, "utf8").toString("base64url") === match[1] ? runId : null;
}

/** The comment's event id, which its `run-event` relationship names. */
export const commentEventId = (runId: string, commentId: string): string => runEventId(runId, `comment ${commentId}`);

/** `passed-at` -> `passed`, `awaiting-override-at` -> `awaiting_override`. */
const statusOf = (key: string): string => key.slice(0, -"-at".length).replaceAll("-", "_");
const utc = (at: string): string => new Date(at).toISOString();

/** What a status says in a sentence: final ones in the past tense, the others as what goes on. */
const PHRASES: Record<string, string> = {
  passed: "passed",
  failed: "failed",
  errored: "errored",
  canceled: "was canceled",
  unreachable: "was unreachable",
  running: "is running",
  pending: "is pending",
  awaiting_override: "is awaiting override",
};
const phraseOf = (status: string): string => PHRASES[status] ?? `is ${status.replaceAll("_", " ")}`;

function stageEvents(runId: string, stage: RunEventStage, actor: string | null): RunEvent[] {
  const target: RunEventTarget = { type: "task-stages", id: stage.id };
  const statuses = Object.entries(stage.statusTimestamps).filter(([key]) => key !== OVERRIDDEN_AT);
  const events: RunEvent[] = statuses.map(([key, at]) => ({
    id: runEventId(runId, `stage ${stage.id} ${key}`),
    action: `task_stage_${statusOf(key)}`,
    description: `The ${stage.stage} task stage ${phraseOf(statusOf(key))}.`,
    createdAt: utc(at),
    actor,
    comment: null,
    target,
  }));
  // D36: `overridden-at` is the override's own time; stages overridden before it re-stamped `running-at`.
  const overriddenAt = stage.statusTimestamps[OVERRIDDEN_AT] ?? stage.statusTimestamps["running-at"];
  if (stage.overridden && overriddenAt !== undefined) {
    const why = stage.overrideComment ? `: ${stage.overrideComment}` : ".";
    events.push({ id: runEventId(runId, `override ${stage.id}`), action: "overridden", description: `The ${stage.stage} task stage was overridden${why}`, createdAt: utc(overriddenAt), actor, comment: null, target });
  }
  for (const result of stage.results) {
    for (const [key, at] of Object.entries(result.statusTimestamps)) {
      const status = statusOf(key);
      const message = result.message && status !== "running" && status !== "pending" ? `: ${result.message}` : ".";
      events.push({
        id: runEventId(runId, `result ${result.id} ${key}`),
        action: `task_result_${status}`,
        description: `Run task ${result.taskName} ${phraseOf(status)}${message}`,
        createdAt: utc(at),
        actor,
        comment: null,
        target: { type: "task-results", id: result.id },
      });
    }
  }
  return events;
}

/**
 * Where an event falls among those of the same millisecond (D36), in the order things happen to a
 * stage: it starts, its results run and finish, it waits for an override, is overridden, finishes.
 */
function rankOf(action: string): number {
  if (action === "created") return 0;
  if (action === "task_stage_pending") return 1;
  if (action === "task_stage_running") return 2;
  if (action === "task_result_pending") return 3;
  if (action === "task_result_running") return 4;
  if (action.startsWith("task_result_")) return 5;
  if (action === "task_stage_awaiting_override") return 6;
  if (action === "overridden") return 7;
  if (action.startsWith("task_stage_")) return 8;
  return 9;
}

/**
 * Every event of the run, oldest first (D36): by time to the millisecond (stored second-precision
 * times read as `.000`); within one millisecond the run's creation first, then stage by stage in
 * run order, within a stage by `rankOf`, then in the order made (results by position), comments last.
 */
export function runEventsOf(run: RunRecord, stages: readonly RunEventStage[], comments: readonly CommentRecord[]): RunEvent[] {
  // decision D49: what happens to the run is the run's creator's doing (the host names them, or no one).
  const actor = run.createdBy === "" ? null : run.createdBy;
  const created: RunEvent = { id: runEventId(run.id, "created"), action: "created", description: "The run was created.", createdAt: utc(run.createdAt), actor, comment: null, target: { type: "runs", id: run.id } };
  const commented = comments.map((c): RunEvent => ({
    id: commentEventId(run.id, c.id),
    action: "commented",
    description: "A comment was added.",
    createdAt: utc(c.createdAt),
    actor: c.authorId,
    comment: c.id,
    target: { type: "comments", id: c.id },
  }));
  // group: 0 the run, 1..n its stages in run order, n + 1 comments; index: the order made.
  const keyed = [[created], ...stages.map((stage) => stageEvents(run.id, stage, actor)), commented].flatMap((events, group) =>
    events.map((event) => ({ event, group, time: Date.parse(event.createdAt), rank: rankOf(event.action) })),
  );
  keyed.sort((a, b) => a.time - b.time || a.group - b.group || a.rank - b.rank);
  return keyed.map((k) => k.event);
}
