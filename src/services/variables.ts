import { notFound } from "../errors.js";
import type { PageRequest, Page } from "../schemas/records.js";
import {
  workspaceVariableSchemas,
  type ResolvedVariable,
  type VariableView,
  type WorkspaceVariableCreate,
  type WorkspaceVariableUpdate,
} from "../schemas/variables.js";
import type { ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";
import type { VarEngine } from "./var-engine.js";

const ATTRIBUTES = "/data/attributes";
const ownerOf = (workspaceId: string) => ({ kind: "workspace", id: workspaceId }) as const;

/**
 * Creates variables in a workspace its caller has just read (the HTTP route reads and authorizes it
 * first): no second read of the workspace, a statement per write on PostgreSQL.
 */
export function createVariableWriter(ctx: Pick<ServiceContext, "dialect">, engine: VarEngine) {
  const schemas = workspaceVariableSchemas(ctx.dialect);
  return {
    create: (workspaceId: string, input: WorkspaceVariableCreate): Promise<VariableView> =>
      engine.create(ownerOf(workspaceId), parseOrThrow(schemas.create, input, ATTRIBUTES)),
  };
}

/** Workspace variables (spec 2.5, 4.5; decisions D10-D12) for the host's trusted code. */
export function createVariableService(ctx: ServiceContext, engine: VarEngine) {
  const schemas = workspaceVariableSchemas(ctx.dialect);
  const writer = createVariableWriter(ctx, engine);
  const requireWorkspace = async (workspaceId: string) => {
    const workspace = await ctx.storage.workspaces.get(workspaceId);
    if (!workspace) throw notFound();
    return workspace;
  };

  return {
    async list(workspaceId: string, page?: PageRequest): Promise<Page<VariableView>> {
      await requireWorkspace(workspaceId);
      return engine.list(ownerOf(workspaceId), page);
    },
    async get(workspaceId: string, variableId: string): Promise<VariableView> {
      const view = await engine.get(ownerOf(workspaceId), variableId);
      if (!view) throw notFound();
      return view;
    },
    async create(workspaceId: string, input: WorkspaceVariableCreate): Promise<VariableView> {
      await requireWorkspace(workspaceId);
      return writer.create(workspaceId, input);
    },
    async update(workspaceId: string, variableId: string, patch: WorkspaceVariableUpdate): Promise<VariableView> {
      return engine.update(ownerOf(workspaceId), variableId, parseOrThrow(schemas.update, patch, ATTRIBUTES));
    },
    async delete(workspaceId: string, variableId: string): Promise<void> {
      if (!(await engine.delete(ownerOf(workspaceId), variableId))) throw notFound();
    },
    /** Plaintext `{ key, value, category, hcl }` of every variable, for the host's run (D10). */
    async resolveForRun(workspaceId: string): Promise<ResolvedVariable[]> {
      await requireWorkspace(workspaceId);
      return engine.resolve(ownerOf(workspaceId));
    },
  };
}
export type VariableService = ReturnType<typeof createVariableService>;
