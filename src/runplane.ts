import type { Connection } from "./http/client-address.js";
import type { HttpTransport } from "./delivery/egress.js";
import type { Authenticate } from "./http/handler.js";
import type { Authorizer } from "./http/types.js";
import type { OpenApiDocument } from "./openapi/document.js";
import type { AgentHub } from "./services/agent-hub.js";
import type { AgentTokenService } from "./services/agent-tokens.js";
import type { AuditTrail } from "./services/audit-trail.js";
import type { KeyringControl } from "./services/keyring-control.js";
import type { SealedValueCounts } from "./services/sealing.js";
import type { Sessions } from "./services/sessions.js";
import type { Directory } from "./services/directory.js";
import type { RunplaneHealth } from "./services/health.js";
import type { PolicySetParameterService } from "./services/policy-set-parameters.js";
import type { RunTaskService } from "./services/run-tasks.js";
import type { TeamProjectService } from "./services/team-projects.js";
import type { VariableService } from "./services/variables.js";

/**
 * What `createRunplane` returns, written out so declarations and editors show these names rather
 * than the expanded shape of every service.
 */
export interface Runplane {
  /**
   * The HTTP API as `(Request, connection?) => Promise<Response>`; mount it with your framework.
   * `connection.remoteAddress` (what the mount knows of the socket; `toNodeListener` passes it) is
   * the client's address for the audit trail and agents' `ip-address` (option `trustProxy`, D62).
   */
  handler: (request: Request, connection?: Connection) => Promise<Response>;
  /** decision D62: the client's address of a request as runplane records it (option `trustProxy`); null when not known. */
  clientAddress(request: Request, connection?: Connection): string | null;
  /** The prefix every route is served below (normalised, no trailing slash); framework mounts read it. */
  basePath: string;
  /** Workspace variables (spec 2.5); `resolveForRun` returns plaintext for the host's run. */
  variables: VariableService;
  /** Policy set parameters (spec 2.4); `resolveForEvaluation` returns plaintext pairs. */
  policySetParameters: PolicySetParameterService;
  /**
   * Agent pool authentication tokens (spec 2.7, decision D22): `create(poolId, { description,
   * createdBy })` returns the token string once; `verify(token)` resolves `{ tokenId, agentPoolId }`
   * or null in constant time and records `last-used-at`.
   */
  agentTokens: AgentTokenService;
  /**
   * Team access to projects (spec 2.6, decisions D19-D21), unchecked (the host's trusted code):
   * `list(projectId, { teamId?, teamIds?, page? })`, `get(id)`, `create(projectId, teamId,
   * attributes)`, `update(id, attributes)`, `delete(id)`. Attributes are the wire attributes
   * (`access`, `project-access`, `workspace-access`); a fixed level shows its implied permissions.
   */
  teamProjects: TeamProjectService;
  /**
   * Run tasks (spec 1-4.3, decisions D13-D18), unchecked (the host's trusted code):
   * `tasks.*` and `workspaceTasks.*` configure them; `createRun(input)` snapshots a workspace's
   * enabled tasks into pending stages and results (idempotent per run id); `startStage(runId,
   * stage)` starts a stage, issues callback tokens and enqueues deliveries in one step;
   * `cancelRun` (unfinished stages `canceled`), `endRun` (the host's run ended: stages never
   * started `unreachable`, D47), `override`, `getStage`, `listStages`; `getRun`, `listRuns(workspaceId, page)`
   * (newest first); `callback(resultId, token, body)` and
   * `receiveCallback(resultId, token, readBody)` (reads the body only once the token holds, D26);
   * `verifyAccessToken(token)` for plan and configuration downloads; `on("stage-status" | "result-status", listener)` after each stored change (`onOwn` for this instance's only);
   * `listDeliveryAttempts(resultId, page)` (D31: the newest 20 attempts, each with up to 1 KiB of
   * the answer, secrets redacted), `retryDelivery(resultId)` (the next attempt of a retrying result now)
   * and `deliveryStatus(resultId)` (attempts made, the next one's due time, the deadline).
   */
  runTasks: RunTaskService;
  /** Host-side records (organizations, projects, workspaces, teams, users, policy sets, agent pools, API tokens). */
  directory: Directory;
  /**
   * decision D53: the audit trail. `list(organization, { since?, page? })` one page of an
   * organization's events, oldest first (page size up to 1,000); `on("audit", listener)` hears every
   * change recorded through this instance after it committed (ship them to a SIEM) and returns a
   * function that stops it; `verify(organization?)` walks each hash chain and names the first break;
   * `prune(retentionDays?, batch?)` removes events past retention (the sweeper's job).
   */
  audit: AuditTrail;
  /**
   * Moves every sealed value (sensitive variables and parameters, run task HMAC keys, queued and
   * past delivery payloads) to the keyring's active key (D11, D29); resolves the number rewritten.
   */
  reencrypt: () => Promise<number>;
  /**
   * What each key id seals, by kind (D29): `{ k1: { "vars.value": 2, "task_deliveries.payload": 9 } }`.
   * A key may leave the keyring once it seals nothing; `runplane doctor` prints this.
   */
  sealedValues: () => Promise<SealedValueCounts>;
  /**
   * The keyring at run time (D29): `activeKeyId`, `keyIds`, and `reload(options?)`, which takes new
   * keys (or reads `KeyringOptions.source` again) without a restart, and refuses to drop a key that
   * still seals a stored value. runplane reloads once by itself when a value names a key it lacks.
   * `ready()` resolves once the start check (D40) chose the key to seal with: await it before
   * sealing at start when other hosts share the storage.
   */
  keyring: KeyringControl;
  /**
   * The OpenAPI 3.1 description of every route, generated from the same zod schemas that
   * validate requests and shape responses, in this instance's dialect and base path. Serve it as JSON,
   * e.g. at `GET /openapi.json`. Built on first call, then the same object.
   */
  openapi: () => OpenApiDocument;
  /** The routes served by `handler`, for documentation and tests. */
  routes: { method: string; path: string }[];
  /**
   * The API's own credential checks, for pages and tools the host serves next to it:
   * `authenticate(request)` resolves the caller (or null, 401), `authorize(principal, action,
   * target)` decides an action such as `runs:read` on `{ organization, projectId?, workspaceId? }`
   * exactly as the routes do (D4, D21). `sessions` are the results page's sign-in sessions (issue
   * 33.3): token records the API refuses, ending after a lifetime, with the token signed in with,
   * or at sign-out.
   */
  auth: { authenticate: Authenticate; authorize: Authorizer; sessions: Sessions };
  /**
   * Outbound HTTP (decision D15): the SSRF-guarded transport verification requests use and
   * `createDispatcher` sends run task requests through unless given its own.
   */
  transport: HttpTransport;
  /**
   * decision D34: the agent sessions of this instance (agents polling `/api/agent/v1/` through
   * `handler`); `createDispatcher` sends the requests of run tasks bound to an agent pool through them.
   */
  agentHub: AgentHub;
  /**
   * decision D28: one cheap storage read, never throwing: `{ status: "ok" | "degraded", reasons,
   * storage: "ok" | "busy" | "unreachable", deliveries: "ok" | "failing" }`. `reasons` lists each cause of
   * `degraded` as a short line safe to show (`storage unreachable: connection refused`). Deliveries
   * are `failing` while half or more of at least 5 attempts this process's dispatcher
   * made in the last 5 minutes failed (`deliveries failing: 8 of 10 attempts in the last 5m failed
   * (4xx: 8)`), or a result has been retrying for longer than 5 minutes (read from the storage's
   * outbox stats, one more read); option `health` changes these. Serve it as a health endpoint.
   */
  health: () => Promise<RunplaneHealth>;
  /** Closes the storage, and the transport when runplane created it. */
  close: () => Promise<void>;
}

export type { AgentTokenService, AuditTrail, Directory, PolicySetParameterService, RunplaneHealth, RunTaskService, TeamProjectService, VariableService };
