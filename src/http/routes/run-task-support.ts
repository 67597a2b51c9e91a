import { invalid, notFound } from "../../errors.js";
import type { JsonApiDocument } from "../jsonapi.js";
import type { AuthTarget, HttpApp, RouteContext } from "../types.js";

/** Shared pieces of the run task routes: authorization targets, includes, plain-JSON bodies. */

/** The target of a workspace-scoped object: organization, workspace and its current project (D21). */
export async function workspaceTarget(app: HttpApp, organization: string, workspaceId: string): Promise<AuthTarget> {
  const workspace = await app.services.directory.workspaces.get(workspaceId);
  return workspace ? { organization, workspaceId, projectId: workspace.projectId } : { organization, workspaceId };
}

/** Loads with `load`, 404 when missing, then checks the route's action on its workspace (D4). */
export async function authorizedIn<T extends { organization: string; workspaceId: string }>(
  ctx: RouteContext,
  load: () => Promise<T | null>,
): Promise<{ record: T; target: AuthTarget }> {
  const record = await load();
  if (!record) throw notFound();
  const target = await workspaceTarget(ctx.app, record.organization, record.workspaceId);
  await ctx.authorize(target);
  return { record, target };
}

/** decision D8: both spellings of each stage include; the router refuses anything else (D30). */
export const STAGE_INCLUDES = {
  run: "run",
  "run.workspace": "run.workspace",
  task_results: "task-results",
  "task-results": "task-results",
  policy_evaluations: "policy-evaluations",
  "policy-evaluations": "policy-evaluations",
  // HCP's OpenAPI lists it for task stages; runplane has no cost estimates, so it adds nothing.
  cost_estimate: "cost-estimate",
  "cost-estimate": "cost-estimate",
} as const;

/** decision D8 for run tasks: `workspace_tasks` and `workspace_tasks.workspace`, either spelling. */
export const TASK_INCLUDES = {
  workspace_tasks: "workspace-tasks",
  "workspace-tasks": "workspace-tasks",
  "workspace_tasks.workspace": "workspace-tasks.workspace",
  "workspace-tasks.workspace": "workspace-tasks.workspace",
} as const;

/**
 * `workspaces` appear only as included resources (of a stage, a task or a run). They are written
 * here, attribute by attribute, rather than registered with the serializer, so no other route's
 * definition of that type is affected.
 */
export async function workspaceResource(app: HttpApp, workspaceId: string): Promise<JsonApiDocument | null> {
  const ws = await app.services.directory.workspaces.get(workspaceId);
  if (!ws) return null;
  return {
    id: ws.id,
    type: "workspaces",
    attributes: { name: ws.name, "working-directory": ws.workingDirectory },
    relationships: {
      organization: { data: { id: ws.organization, type: "organizations" } },
      project: { data: { id: ws.projectId, type: "projects" } },
    },
    links: { self: `${app.basePath}/workspaces/${encodeURIComponent(ws.id)}` },
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The override body is optional: go-tfe sends plain JSON `{"comment": "..."}` (or `{}`); a JSON:API
 * body with `data.attributes.comment` is accepted too (reference 4.5).
 */
export function overrideComment(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (!isObject(body)) throw invalid("", "The request body must be a JSON object");
  const fromData = isObject(body.data) ? (isObject(body.data.attributes) ? body.data.attributes.comment : undefined) : undefined;
  const pointer = isObject(body.data) ? "/data/attributes/comment" : "/comment";
  const comment = isObject(body.data) ? fromData : body.comment;
  if (comment === undefined || comment === null) return null;
  if (typeof comment !== "string") throw invalid(pointer, "Comment must be a string");
  if (comment.length > 1000) throw invalid(pointer, "Comment is too long (maximum is 1000 characters)");
  return comment;
}

/** `Authorization: Bearer <token>`, or null. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}
