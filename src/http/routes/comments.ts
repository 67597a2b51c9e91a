import { commentEventId } from "../../domain/run-events.js";
import { invalid, notFound } from "../../errors.js";
import type { CommentRecord } from "../../schemas/run-comments.js";
import { readResourceBody } from "../documents.js";
import { toPageRequest } from "../pagination.js";
import { commentData } from "../run-documents.js";
import type { Route, RouteContext } from "../types.js";
import { loadRun } from "./run-read-support.js";
import { authorizedIn } from "./run-task-support.js";

/**
 * Comments on a run, stored by runplane: `GET` and `POST /runs/:id/comments` and
 * `GET /comments/:id`, as HCP Terraform's Comments API (type `comments`, attribute `body`, a
 * `run-event` relationship naming the run's `commented` event). Anyone who may read the run may
 * comment on it, an integration's API token included.
 */

const data = (c: CommentRecord) => commentData(c, commentEventId(c.runId, c.id));

/** go-tfe may send `relationships.run` (CommentCreateOptions.Run): when it does, it must name the run of the path. */
function checkRunRelationship(relationships: Record<string, unknown>, runId: string): void {
  const run = relationships.run as { data?: { id?: unknown } } | undefined;
  const id = run?.data?.id;
  if (id !== undefined && id !== runId) throw invalid("/data/relationships/run", "Run must be the run of the URL");
}

async function loadComment(ctx: RouteContext): Promise<CommentRecord> {
  const { record } = await authorizedIn(ctx, () => ctx.app.services.comments.get(ctx.params.comment_id!));
  return record;
}

export const commentRoutes: Route[] = [
  {
    method: "GET",
    path: "/runs/:run_id/comments",
    auth: "principal",
    query: { page: "always" },
    async handle(ctx) {
      const { record: run } = await loadRun(ctx);
      const page = ctx.query.page!;
      const list = await ctx.app.services.comments.list(run.id, toPageRequest(page));
      const doc = ctx.app.jsonapi.collection("comments", list.items.map(data), { url: ctx.url, pagination: { ...page, total: list.total } });
      return { status: 200, document: doc };
    },
  },
  {
    method: "POST",
    path: "/runs/:run_id/comments",
    auth: "principal",
    async handle(ctx) {
      const { record: run } = await loadRun(ctx);
      const body = readResourceBody(ctx.body, ["comments"]);
      checkRunRelationship(body.relationships, run.id);
      const author = ctx.principal.kind === "user" ? (ctx.principal.userId ?? null) : null;
      const comment = await ctx.app.services.comments.create(run, body.attributes, author);
      return { status: 201, document: ctx.app.jsonapi.resource("comments", data(comment)) };
    },
  },
  {
    method: "GET",
    path: "/comments/:comment_id",
    auth: "principal",
    async handle(ctx) {
      const comment = await loadComment(ctx);
      if (!comment) throw notFound();
      return { status: 200, document: ctx.app.jsonapi.resource("comments", data(comment)) };
    },
  },
];
