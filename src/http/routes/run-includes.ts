import { rfc3339 } from "../../domain/stage-machine.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import type { JsonApiDocument } from "../jsonapi.js";
import type { RouteContext } from "../types.js";

/**
 * The related resources of a run that `GET /runs/:id?include=...` adds besides its stages, plan,
 * apply and workspace (D8; docs/reference/includes.md). Each is something the caller may
 * read already: it reads the run, and these describe the run.
 */

/** The run's creator as a `users` resource, when the directory knows the user; else nothing (HCP: a missing relation). */
export async function creatorResource(ctx: RouteContext, run: RunRecord): Promise<JsonApiDocument | null> {
  if (run.createdBy === "") return null;
  const user = await ctx.app.services.directory.users.get(run.createdBy);
  if (!user) return null;
  return ctx.app.jsonapi.resource("users", { id: user.id, username: user.username }).data as JsonApiDocument;
}

/**
 * A stable id for the ingress attributes of one configuration version: runplane stores none of its
 * own (they come with the run), and HCP's ids (`ia-...`) are not sent to it.
 */
const ingressId = (run: RunRecord): string => `ia-${run.configurationVersionId}`;

/**
 * decision D49: the configuration version as go-tfe decodes it, from the run that names it:
 * `uploaded` when the run was created (the host had it then), `archived` when the host marked it
 * not downloadable; `tfe-api`, no upload URL; its ingress attributes when the run came with VCS data.
 */
export function configurationVersionResource(ctx: RouteContext, run: RunRecord): JsonApiDocument {
  const data = {
    id: run.configurationVersionId,
    autoQueueRuns: false,
    error: "",
    errorMessage: "",
    source: "tfe-api",
    speculative: run.isSpeculative,
    provisional: false,
    status: run.configurationVersionDownloadable ? "uploaded" : "archived",
    statusTimestamps: { "uploaded-at": rfc3339(new Date(run.createdAt)) },
    uploadUrl: null,
    ingressAttributes: run.vcs ? ingressId(run) : null,
  };
  return ctx.app.jsonapi.resource("configuration-versions", data).data as JsonApiDocument;
}

/** The commit the run task request describes (`vcs_*`), in go-tfe's IngressAttributes names; null without VCS data. */
export function ingressAttributesResource(ctx: RouteContext, run: RunRecord): JsonApiDocument | null {
  const vcs = run.vcs;
  if (!vcs) return null;
  const data = {
    id: ingressId(run),
    branch: vcs.branch ?? "",
    commitSha: vcs.commitHash ?? "",
    commitUrl: vcs.commitUrl ?? "",
    pullRequestUrl: vcs.pullRequestUrl ?? "",
    isPullRequest: vcs.pullRequestUrl !== null && vcs.pullRequestUrl !== "",
  };
  return ctx.app.jsonapi.resource("ingress-attributes", data).data as JsonApiDocument;
}
