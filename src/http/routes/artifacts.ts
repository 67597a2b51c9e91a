import { ApiError, notFound } from "../../errors.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import type { RunArtifactKind } from "../../storage/run-tasks-types.js";
import { toArtifactResponse, type ArtifactKind } from "../artifact-body.js";
import type { Route, RouteContext } from "../types.js";
import { bearerToken, workspaceTarget } from "./run-task-support.js";

/**
 * The two artifacts a run task request links to (decision D24): the plan JSON and the configuration
 * version. Either credential works: the result's access token while it is valid, for its own run
 * only, or an API credential with `runs >= read` on the run's workspace. The bytes are the host's.
 */

interface ArtifactRoute {
  path: string;
  param: string;
  kind: ArtifactKind;
  storageKind: RunArtifactKind;
  option: string;
  idOf: (run: RunRecord) => string;
}

/**
 * The run the request may read. An access token that verifies stands for its result's run: another
 * run's artifact is 404 (a valid credential without access, D4). Anything else, including the token
 * of a final or expired result, is tried as an API credential: 401 when it is none.
 */
async function authorizedRun(ctx: RouteContext, spec: ArtifactRoute, id: string): Promise<RunRecord> {
  const token = bearerToken(ctx.request);
  const verified = token === null ? null : await ctx.app.services.runTasks.verifyAccessToken(token);
  if (verified) {
    const run = await ctx.app.services.runTasks.getRun(verified.runId);
    if (!run || spec.idOf(run) !== id) throw notFound();
    return run;
  }
  await ctx.authenticate();
  const run = await ctx.app.services.runTasks.findRunByArtifact(spec.storageKind, id);
  if (!run) throw notFound();
  await ctx.authorize(await workspaceTarget(ctx.app, run.organization, run.workspaceId));
  return run;
}

const artifactRoute = (spec: ArtifactRoute): Route => ({
  method: "GET",
  path: spec.path,
  auth: "custom",
  async handle(ctx) {
    const run = await authorizedRun(ctx, spec, ctx.params[spec.param]!);
    // The host marked this configuration as not downloadable: its request carried a null URL.
    if (spec.kind === "configurationVersion" && !run.configurationVersionDownloadable) throw notFound();
    const provider = ctx.app.artifacts?.[spec.kind];
    const missing = (): ApiError =>
      new ApiError("not-found", { detail: `This host provides no ${spec.kind === "planJson" ? "plan JSON" : "configuration version"} for the run (option ${spec.option})` });
    if (!provider) throw missing();
    const response = toArtifactResponse(await provider(run), spec.kind);
    if (!response) throw missing();
    return { response };
  },
});

export const artifactRoutes: Route[] = [
  artifactRoute({
    path: "/plans/:plan_id/json-output",
    param: "plan_id",
    kind: "planJson",
    storageKind: "plan",
    option: "artifacts.planJson",
    idOf: (run) => run.planId,
  }),
  artifactRoute({
    path: "/configuration-versions/:configuration_version_id/download",
    param: "configuration_version_id",
    kind: "configurationVersion",
    storageKind: "configuration-version",
    option: "artifacts.configurationVersion",
    idOf: (run) => run.configurationVersionId,
  }),
];
