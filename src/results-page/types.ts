import type { Connection } from "../http/client-address.js";
import type { Authenticate } from "../http/handler.js";
import type { AuditEntry } from "../schemas/audit.js";
import type { Principal } from "../schemas/common.js";
import type { Page } from "../schemas/records.js";
import type { Workspace } from "../schemas/directory.js";
import type { RunTaskService } from "../services/run-tasks.js";
import type { Sessions } from "../services/sessions.js";

/** The authorization target of a run: its organization, workspace and the workspace's project (D21). */
export interface RunTarget {
  organization: string;
  workspaceId: string;
  projectId?: string;
}

/** What the page asks the authorizer: reading a run, and resending its requests (D31's "retry now"). */
export type PageAction = "runs:read" | "run-tasks:manage" | "audit-trail:read";

/**
 * What the results page needs of a runplane instance (structurally a `Runplane`): its
 * authenticator, authorizer and sign-in sessions, read access to runs, stages, results, outcomes, delivery attempts
 * and workspaces, and "retry now" (D31).
 */
export interface ResultsPageSource {
  auth: {
    authenticate: Authenticate;
    authorize(principal: Principal, action: PageAction, target: RunTarget | { organization: string }): Promise<boolean>;
    /** The sign-in sessions the page's cookie holds. */
    sessions: Sessions;
  };
  runTasks: Pick<
    RunTaskService,
    "getRun" | "listRuns" | "listStages" | "listResults" | "getResult" | "listOutcomes" | "listDeliveryAttempts" | "deliveryStatus" | "retryDelivery" | "agentFacts" | "agentNames"
  >;
  directory: { workspaces: { get(id: string): Promise<Workspace | null>; list(organization: string): Promise<Workspace[]> } };
  /** decision D62: the client's address of a request (a Runplane's own); absent: none is recorded. */
  clientAddress?(request: Request, connection?: Connection): string | null;
  /** decision D53: the audit trail, for the owners' audit view (absent: the view is 404). */
  audit?: { list(organization: string, options: { page?: { number?: number; size?: number } }): Promise<Page<AuditEntry>> };
}
