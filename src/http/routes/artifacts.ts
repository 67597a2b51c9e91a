import { ApiError, badRequest, isApiError, notFound } from "../../errors.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import type { RunArtifactKind } from "../../storage/run-tasks-types.js";
import { sliceBody, toArtifactResponse, type ArtifactKind } from "../artifact-body.js";
import { framedLog, logComplete } from "../log-framing.js";
import { runDetailsOf } from "../run-providers.js";
import type { Route, RouteContext } from "../types.js";
import { bearerToken, workspaceTarget } from "./run-task-support.js";

/**
 * What integrations download (decision D24): the plan JSON and the configuration version the run
 * task request links to, and the plan and apply logs that `log-read-url` points at (D32).
 * Either credential works for the run's plan: the result's access token while it is valid, for its
 * own run only, or an API credential with `runs >= read` on the run's workspace. The bytes are the host's.
 */

interface ArtifactRoute {
  path: string;
  param: string;
  kind: ArtifactKind;
  storageKind: RunArtifactKind;
  option: string;
  what: string;
  /** The result's access token reads it too (D24: the plan and what belongs to it, not the apply). */
  accessToken: boolean;
  /** go-tfe's log reader asks for chunks: `?limit=<bytes>&offset=<bytes>`. */
  ranged?: boolean;
}

/** The id a run is found by, per kind. */
export const runIdOf = (run: RunRecord, kind: RunArtifactKind): string =>
  kind === "plan" ? run.planId : kind === "apply" ? run.applyId : run.configurationVersionId;

/**
 * The run addressed by a plan, apply or configuration version id that the request may read. An
 * access token that verifies stands for its result's run (when `accessToken` allows it): another
 * run's object is 404 (a valid credential without access, D4). Anything else, including the token
 * of a final or expired result, is tried as an API credential: 401 when it is none. Ids are the
 * host's and may repeat across organizations: the newest run naming `id` that the
 * credential may read answers, never another organization's, and theirs never hide its own.
 */
export async function readableRun(ctx: RouteContext, kind: RunArtifactKind, id: string, accessToken: boolean): Promise<RunRecord> {
  const verified = accessToken ? await verifiedRun(ctx) : null;
  if (verified) {
    if (runIdOf(verified, kind) !== id) throw notFound();
    return verified;
  }
  await ctx.authenticate();
  for (const run of await ctx.app.services.runTasks.findRunsByArtifact(kind, id)) {
    try {
      await ctx.authorize(await workspaceTarget(ctx.app, run.organization, run.workspaceId));
      return run;
    } catch (error) {
      // D4: a run this credential may not read is as good as missing; try the next one.
      if (!isApiError(error) || error.code !== "not-found") throw error;
    }
  }
  throw notFound();
}

/** The run of the request's result access token when it verifies (D17, D24), else null. */
export async function verifiedRun(ctx: RouteContext): Promise<RunRecord | null> {
  const token = bearerToken(ctx.request);
  const verified = token === null ? null : await ctx.app.services.runTasks.verifyAccessToken(token);
  if (!verified) return null;
  const run = await ctx.app.services.runTasks.getRun(verified.runId);
  if (!run) throw notFound();
  return run;
}

/** A byte count from the query: a non-negative integer, or absent. */
function byteParam(ctx: RouteContext, name: "limit" | "offset"): number | undefined {
  const raw = ctx.query.filters[name];
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw badRequest(`${name} must be a non-negative integer`, name);
  return Number(raw);
}

interface ByteRange {
  offset: number;
  limit: number | undefined;
}
const byteRange = (ctx: RouteContext): ByteRange => ({ offset: byteParam(ctx, "offset") ?? 0, limit: byteParam(ctx, "limit") });

const LOG_QUERY = { filters: [{ name: "limit" }, { name: "offset" }] };

/**
 * The host's bytes of `kind` for `run`, framed by `frame` (D48) and then cut to the request's
 * `limit`/`offset` when `ranged`: offsets count the frame's bytes, as go-tfe's log reader does.
 */
async function serveArtifact(
  ctx: RouteContext,
  run: RunRecord,
  spec: Pick<ArtifactRoute, "kind" | "option" | "what">,
  range: ByteRange | null,
  frame: (response: Response) => Response | Promise<Response> = (r) => r,
): Promise<Response> {
  // The host marked this configuration as not downloadable: its request carried a null URL.
  if (spec.kind === "configurationVersion" && !run.configurationVersionDownloadable) throw notFound();
  const provider = ctx.app.artifacts?.[spec.kind];
  const missing = (): ApiError => new ApiError("not-found", { detail: `This host provides no ${spec.what} for the run (option ${spec.option})` });
  if (!provider) throw missing();
  const given = toArtifactResponse(await provider(run), spec.kind);
  if (!given) throw missing();
  const response = await frame(given);
  return range ? sliceBody(response, range.offset, range.limit) : response;
}

const artifactRoute = (spec: ArtifactRoute): Route => ({
  method: "GET",
  path: spec.path,
  auth: "custom",
  ...(spec.ranged ? { query: LOG_QUERY } : {}),
  async handle(ctx) {
    const range = spec.ranged ? byteRange(ctx) : null;
    const run = await readableRun(ctx, spec.storageKind, ctx.params[spec.param]!, spec.accessToken);
    return { response: await serveArtifact(ctx, run, spec, range) };
  },
});

const LOGS = {
  plan: { kind: "planLog", option: "artifacts.planLog", what: "plan log" },
  apply: { kind: "applyLog", option: "artifacts.applyLog", what: "apply log" },
} as const;

/**
 * decision D32: where `log-read-url` points. The capability in the path is the credential (an
 * Authorization header is ignored); malformed, forged, expired, or naming a run that is gone: the
 * same 404 as any missing object, so a guess learns nothing.
 */
const logCapabilityRoute: Route = {
  method: "GET",
  path: "/logs/:capability",
  auth: "none",
  query: LOG_QUERY,
  async handle(ctx) {
    const range = byteRange(ctx);
    const capability = ctx.params.capability!;
    // Only the exact spelling: a percent-encoded one would pass through logs and excerpts unnoticed.
    // ctx.url is the links' base (the public URL), so the spelling is read from the request itself.
    if (!new URL(ctx.request.url).pathname.replace(/\/+$/, "").endsWith(`/${capability}`)) throw notFound();
    const granted = ctx.app.services.logs.verify(capability);
    const run = granted ? await ctx.app.services.runTasks.getRun(granted.runId) : null;
    if (!granted || !run) throw notFound();
    // decision D48: HCP's STX/ETX framing, ETX once the host says the phase is final.
    const frame = async (response: Response) =>
      framedLog(response, logComplete(await runDetailsOf(ctx.app.runs, ctx.app.logger, run), granted.kind), ctx.app.dialect);
    return { response: await serveArtifact(ctx, run, LOGS[granted.kind], range, frame) };
  },
};

export const artifactRoutes: Route[] = [
  artifactRoute({ path: "/plans/:plan_id/json-output", param: "plan_id", kind: "planJson", storageKind: "plan", option: "artifacts.planJson", what: "plan JSON", accessToken: true }),
  artifactRoute({
    path: "/configuration-versions/:configuration_version_id/download",
    param: "configuration_version_id",
    kind: "configurationVersion",
    storageKind: "configuration-version",
    option: "artifacts.configurationVersion",
    what: "configuration version",
    accessToken: true,
  }),
  // A run's logs for API credentials (and a result's access token, its own plan log only);
  // `log-read-url` points at the capability route instead (D32).
  artifactRoute({ path: "/plans/:plan_id/log", param: "plan_id", kind: "planLog", storageKind: "plan", option: "artifacts.planLog", what: "plan log", accessToken: true, ranged: true }),
  artifactRoute({ path: "/applies/:apply_id/log", param: "apply_id", kind: "applyLog", storageKind: "apply", option: "artifacts.applyLog", what: "apply log", accessToken: false, ranged: true }),
  logCapabilityRoute,
];
