import { createHash } from "node:crypto";
import type { CommentRecord } from "../schemas/run-comments.js";
import type { RunRecord, StatusTimestampMap } from "../schemas/run-task-records.js";
import type { RunStage } from "../schemas/run-tasks.js";

/**
 * The events of a run that runplane knows (issue 27): its creation, every status each task stage
 * and each task result reached, an override, and every comment. HCP Terraform lists a run's events
 * at `GET /runs/:id/run-events` (go-tfe `RunEvent`: action, created-at, description, actor,
 * comment); runplane derives them from what it stores, so they need no storage of their own and
 * their ids are stable: `re-` and 16 base62 characters of a digest of the run and the event.
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

/** A stable event id: the same run and event always give the same id, another one almost surely not. */
export function runEventId(runId: string, key: string): string {
  const digest = createHash("sha256").update(`${runId}\n${key}`).digest();
  let id = "re-";
  for (let i = 0; i < 16; i++) id += BASE62[digest[i]! % 62];
  return id;
}

/** The comment's event id, which its `run-event` relationship names. */
export const commentEventId = (runId: string, commentId: string): string => runEventId(runId, `comment ${commentId}`);

/** `passed-at` -> `passed`, `awaiting-override-at` -> `awaiting_override`. */
const statusOf = (key: string): string => key.slice(0, -"-at".length).replaceAll("-", "_");
const utc = (at: string): string => new Date(at).toISOString();

function stageEvents(runId: string, stage: RunEventStage): RunEvent[] {
  const target: RunEventTarget = { type: "task-stages", id: stage.id };
  const events: RunEvent[] = Object.entries(stage.statusTimestamps).map(([key, at]) => ({
    id: runEventId(runId, `stage ${stage.id} ${key}`),
    action: `task_stage_${statusOf(key)}`,
    description: `The ${stage.stage} task stage is ${statusOf(key).replaceAll("_", " ")}.`,
    createdAt: utc(at),
    actor: null,
    comment: null,
    target,
  }));
  // decision D13: the override moves the stage to running again, so its time is the latest running-at.
  const overriddenAt = stage.statusTimestamps["running-at"];
  if (stage.overridden && overriddenAt !== undefined) {
    const why = stage.overrideComment ? `: ${stage.overrideComment}` : ".";
    events.push({ id: runEventId(runId, `override ${stage.id}`), action: "overridden", description: `The ${stage.stage} task stage was overridden${why}`, createdAt: utc(overriddenAt), actor: null, comment: null, target });
  }
  for (const result of stage.results) {
    for (const [key, at] of Object.entries(result.statusTimestamps)) {
      const status = statusOf(key);
      const message = result.message && status !== "running" && status !== "pending" ? `: ${result.message}` : ".";
      events.push({
        id: runEventId(runId, `result ${result.id} ${key}`),
        action: `task_result_${status}`,
        description: `Run task ${result.taskName} ${status.replaceAll("_", " ")}${message}`,
        createdAt: utc(at),
        actor: null,
        comment: null,
        target: { type: "task-results", id: result.id },
      });
    }
  }
  return events;
}

/**
 * Every event of the run, oldest first. Status timestamps have whole seconds (D9), so events are
 * ordered by their second and, within one, keep the order they are made in: creation, then each
 * stage with its results, then comments.
 */
export function runEventsOf(run: RunRecord, stages: readonly RunEventStage[], comments: readonly CommentRecord[]): RunEvent[] {
  const events: RunEvent[] = [
    { id: runEventId(run.id, "created"), action: "created", description: "The run was created.", createdAt: utc(run.createdAt), actor: null, comment: null, target: { type: "runs", id: run.id } },
    ...stages.flatMap((stage) => stageEvents(run.id, stage)),
    ...comments.map((c) => ({
      id: commentEventId(run.id, c.id),
      action: "commented",
      description: "A comment was added.",
      createdAt: utc(c.createdAt),
      actor: c.authorId,
      comment: c.id,
      target: { type: "comments", id: c.id } as const,
    })),
  ];
  const second = (e: RunEvent): string => e.createdAt.slice(0, 19);
  // Array.prototype.sort is stable.
  return events.sort((a, b) => (second(a) < second(b) ? -1 : second(a) > second(b) ? 1 : 0));
}
