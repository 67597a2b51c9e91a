import { commentEventId, runEventsOf, runIdOfEvent, type RunEvent } from "../../domain/run-events.js";
import { notFound } from "../../errors.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import type { JsonApiDocument } from "../jsonapi.js";
import { commentData, runEventData } from "../run-documents.js";
import type { Route, RouteContext } from "../types.js";
import { loadRun, stagesWithResults } from "./run-read-support.js";
import { authorizedIn } from "./run-task-support.js";

/**
 * `GET /runs/:id/run-events`: what runplane knows happened to the run, oldest first
 * (src/domain/run-events.ts). Not paged, as go-tfe's `RunEventList` expects; bounded because a run
 * has at most four stages and `COMMENT_LIMITS.perRun` comments. `include=actor,comment` adds the
 * acting users (those in the directory) and the comments. `GET /run-events/:id` reads one: its id
 * names its run (D36), read and authorized like the list, 404 for an id that names no event.
 */

/** decision D8: go-tfe's `RunEventIncludeOpt` names. */
export const RUN_EVENT_INCLUDES = { actor: "actor", comment: "comment" } as const;


async function included(ctx: RouteContext, run: RunRecord, actors: readonly string[], comments: Awaited<ReturnType<typeof listComments>>): Promise<JsonApiDocument[]> {
  const out: JsonApiDocument[] = [];
  if (ctx.query.includes.has("actor")) {
    for (const id of new Set(actors)) {
      const user = await ctx.app.services.directory.users.get(id);
      if (user) out.push(ctx.app.jsonapi.resource("users", { id: user.id, username: user.username }).data as JsonApiDocument);
    }
  }
  if (ctx.query.includes.has("comment")) {
    for (const c of comments) out.push(ctx.app.jsonapi.resource("comments", commentData(c, commentEventId(run.id, c.id))).data as JsonApiDocument);
  }
  return out;
}

const listComments = async (ctx: RouteContext, runId: string) => (await ctx.app.services.comments.list(runId)).items;

/** The run's events and its comments (the `comment` include). */
async function eventsOf(ctx: RouteContext, run: RunRecord) {
  const [stages, comments] = await Promise.all([stagesWithResults(ctx, run), listComments(ctx, run.id)]);
  return { events: runEventsOf(run, stages, comments), comments };
}

const actorsOf = (events: readonly RunEvent[]): string[] => events.flatMap((e) => (e.actor === null ? [] : [e.actor]));

export const runEventRoutes: Route[] = [
  {
    method: "GET",
    path: "/runs/:run_id/run-events",
    auth: "principal",
    query: { include: RUN_EVENT_INCLUDES },
    async handle(ctx) {
      const { record: run } = await loadRun(ctx);
      const { events, comments } = await eventsOf(ctx, run);
      const doc = ctx.app.jsonapi.collection("run-events", events.map(runEventData));
      if (ctx.query.includes.size === 0) return { status: 200, document: doc };
      return { status: 200, document: { ...doc, included: await included(ctx, run, actorsOf(events), comments) } };
    },
  },
  {
    method: "GET",
    path: "/run-events/:run_event_id",
    auth: "principal",
    query: { include: RUN_EVENT_INCLUDES },
    async handle(ctx) {
      const id = ctx.params.run_event_id!;
      const runId = runIdOfEvent(id);
      const { record: run } = await authorizedIn(ctx, async () => (runId === null ? null : ctx.app.services.runTasks.getRun(runId)));
      const { events, comments } = await eventsOf(ctx, run);
      const event = events.find((e) => e.id === id);
      if (!event) throw notFound();
      const doc = ctx.app.jsonapi.resource("run-events", runEventData(event));
      if (ctx.query.includes.size === 0) return { status: 200, document: doc };
      const mine = comments.filter((c) => c.id === event.comment);
      return { status: 200, document: { ...doc, included: await included(ctx, run, actorsOf([event]), mine) } };
    },
  },
];
