import type { Authenticate } from "../http/handler.js";
import type { Principal } from "../schemas/common.js";
import type { Workspace } from "../schemas/directory.js";
import type { RunTaskService } from "../services/run-tasks.js";

/** The authorization target of a run: its organization, workspace and the workspace's project (D21). */
export interface RunTarget {
  organization: string;
  workspaceId: string;
  projectId?: string;
}

/**
 * What the results page needs of a runplane instance (structurally a `Runplane`): its
 * authenticator and authorizer, and read access to runs, stages, results, outcomes and workspaces.
 */
export interface ResultsPageSource {
  auth: {
    authenticate: Authenticate;
    authorize(principal: Principal, action: "runs:read", target: RunTarget): Promise<boolean>;
  };
  runTasks: Pick<RunTaskService, "getRun" | "listRuns" | "listStages" | "listResults" | "listOutcomes">;
  directory: { workspaces: { get(id: string): Promise<Workspace | null>; list(organization: string): Promise<Workspace[]> } };
}
