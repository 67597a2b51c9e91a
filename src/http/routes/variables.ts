import { invalid, notFound } from "../../errors.js";
import { variablesScope } from "../../storage/revisions.js";
import type { Workspace } from "../../schemas/directory.js";
import type { VariableView, WorkspaceVariableCreate, WorkspaceVariableUpdate } from "../../schemas/variables.js";
import { readResourceBody } from "../documents.js";
import type { ResourceDefinition } from "../jsonapi.js";
import { workspaceVariableAttributes } from "../../schemas/wire.js";
import type { Dialect } from "../../schemas/common.js";
import type { HttpApp, Route, RouteContext } from "../types.js";

/** Workspace variables, spec 4.5 with decisions D1, D3, D7, D10, D12, D23. */
export const variableResource = (basePath: string, dialect: Dialect): ResourceDefinition => ({
  type: "vars",
  attributes: workspaceVariableAttributes(dialect),
  self: (d) => `${basePath}/workspaces/${String(d.configurable)}/vars/${String(d.id)}`,
  relationships: {
    configurable: {
      type: "workspaces",
      related: (d) => `${basePath}/organizations/${encodeURIComponent(String(d.organization))}/workspaces/${encodeURIComponent(String(d.workspaceName))}`,
    },
  },
});

/** decision D1: `config` is written as `terraform` in the hcp-terraform dialect. */
export const categoryWord = (app: HttpApp, category: VariableView["category"]): string =>
  category === "config" && app.dialect === "hcp-terraform" ? "terraform" : category;

const toData = (app: HttpApp, workspace: Workspace, v: VariableView) => ({
  ...v,
  category: categoryWord(app, v.category),
  configurable: workspace.id,
  organization: workspace.organization,
  workspaceName: workspace.name,
});

async function loadWorkspace(ctx: RouteContext): Promise<Workspace> {
  const workspace = await ctx.app.services.directory.workspaces.get(ctx.params.workspace_id!);
  if (!workspace) throw notFound();
  await ctx.authorize({ organization: workspace.organization, projectId: workspace.projectId, workspaceId: workspace.id });
  return workspace;
}

/** decision D12: the deprecated create filters must name the workspace of the path when given. */
function checkDeprecatedFilter(document: Record<string, unknown>, workspace: Workspace): void {
  const filter = document.filter;
  if (filter === undefined || filter === null) return;
  const f = filter as { workspace?: { name?: unknown }; organization?: { name?: unknown } };
  const ws = f.workspace?.name;
  const org = f.organization?.name;
  if (ws !== undefined && ws !== workspace.name) throw invalid("/filter/workspace/name", "filter workspace name does not match the workspace of the URL");
  if (org !== undefined && org !== workspace.organization) {
    throw invalid("/filter/organization/name", "filter organization name does not match the workspace of the URL");
  }
}

/** The workspace's variables, not paginated (D7): `vars`, and `all-vars` (go-tfe's ListAll). */
const listRoute = (path: string): Route => ({
  method: "GET",
  path,
  auth: "principal",
  // The list is rendered from the directory (the workspace, the caller's access) and the variables.
  cacheScopes: (params) => [variablesScope({ kind: "workspace", id: params.workspace_id! })],
  async handle(ctx) {
    const workspace = await loadWorkspace(ctx);
    // decision D7: workspace variable lists are not paginated.
    const { items } = await ctx.app.services.variables.list(workspace.id);
    return { status: 200, document: ctx.app.jsonapi.collection("vars", items.map((v) => toData(ctx.app, workspace, v))) };
  },
});

export const variableRoutes: Route[] = [
  listRoute("/workspaces/:workspace_id/vars"),
  // decision D49: HCP's all-vars adds the variables the workspace inherits from variable sets;
  // runplane has none, so it is the workspace's own list (go-tfe's Variables.ListAll).
  listRoute("/workspaces/:workspace_id/all-vars"),
  {
    method: "GET",
    path: "/workspaces/:workspace_id/vars/:variable_id",
    auth: "principal",
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      const v = await ctx.app.services.variables.get(workspace.id, ctx.params.variable_id!);
      return { status: 200, document: ctx.app.jsonapi.resource("vars", toData(ctx.app, workspace, v)) };
    },
  },
  {
    method: "POST",
    path: "/workspaces/:workspace_id/vars",
    auth: "principal",
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      const body = readResourceBody(ctx.body, ["vars"]);
      checkDeprecatedFilter(body.document, workspace);
      // The service validates the attributes with zod; the cast only names the expected shape.
      const v = await ctx.app.services.variableWriter.create(workspace.id, body.attributes as WorkspaceVariableCreate);
      return { status: 201, document: ctx.app.jsonapi.resource("vars", toData(ctx.app, workspace, v)) };
    },
  },
  {
    method: "PATCH",
    path: "/workspaces/:workspace_id/vars/:variable_id",
    auth: "principal",
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      const body = readResourceBody(ctx.body, ["vars"], ctx.params.variable_id);
      const v = await ctx.app.services.variables.update(workspace.id, ctx.params.variable_id!, body.attributes as WorkspaceVariableUpdate);
      return { status: 200, document: ctx.app.jsonapi.resource("vars", toData(ctx.app, workspace, v)) };
    },
  },
  {
    method: "DELETE",
    path: "/workspaces/:workspace_id/vars/:variable_id",
    auth: "principal",
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      await ctx.app.services.variables.delete(workspace.id, ctx.params.variable_id!);
      return { status: 204 };
    },
  },
];
