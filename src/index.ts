import { createKeyring, generateKey, type Keyring, type KeyringOptions } from "./crypto/keyring.js";
import { newId } from "./crypto/random.js";
import { createHandler, type Authenticate } from "./http/handler.js";
import { createJsonApi } from "./http/jsonapi.js";
import { agentTokenResource, agentTokenRoutes } from "./http/routes/agent-tokens.js";
import { pingRoutes } from "./http/routes/ping.js";
import { policySetParameterResource, policySetParameterRoutes } from "./http/routes/policy-set-parameters.js";
import { variableResource, variableRoutes } from "./http/routes/variables.js";
import { teamProjectResource, teamProjectRoutes } from "./http/routes/team-projects.js";
import { runTaskResources, runTaskRoutes } from "./http/routes/run-tasks.js";
import { taskStageResources, taskStageRoutes } from "./http/routes/task-stages.js";
import { resolveRunTaskSettings, type RunTaskOptions } from "./services/run-task-settings.js";
import type { Authorizer, HttpApp, Route } from "./http/types.js";
import { createConsoleLogger, toLogger, type Logger, type PinoLikeLogger } from "./logger.js";
import type { Dialect } from "./schemas/common.js";
import { createAuthorizer } from "./services/authorizer.js";
import type { ServiceContext } from "./services/context.js";
import { createServices } from "./services/index.js";
import { createTokenAuthenticator, TOUCH_INTERVAL_MS } from "./services/principals.js";
import { createReadCache } from "./http/read-cache.js";
import type { Storage } from "./storage/types.js";
import { createEgress, createEgressPolicy, type HttpTransport, type Resolver } from "./delivery/egress.js";
import { createTaskEndpointCheck } from "./delivery/verification.js";

/** Options of {@link createRunplane}. */
export interface RunplaneOptions {
  /** Where everything is stored: `createMemoryStorage()`, `createSqliteStorage(db)`, or your own adapter. */
  storage: Storage;
  /** Prefix of every route (decision D2). Default `/api/v2`. */
  basePath?: string;
  /**
   * Resolves the caller of an API request; `null` answers 401. Default: bearer API tokens issued by
   * `directory.createApiToken(...)`.
   */
  authenticate?: Authenticate;
  /** Wire dialect (decision D1): `default` (spec words) or `hcp-terraform` (real-client words). */
  dialect?: Dialect;
  /**
   * Keys sealing sensitive values at rest (decision D11). Without one an ephemeral key is generated
   * and a warning logged: sealed values then cannot be read after a restart.
   */
  keyring?: Keyring | KeyringOptions;
  /** Current time. Default `() => new Date()`. */
  clock?: () => Date;
  /**
   * Structured logger: a {@link Logger}, or a pino logger as it is (fields first). Default:
   * `createConsoleLogger()`, warnings and errors as JSON lines on stderr; pass
   * `createConsoleLogger({ level: "info" })` to see every delivery attempt and stage change.
   */
  logger?: Logger | PinoLikeLogger;
  /** Origin integrations reach the API at (callback, plan and configuration URLs). Default `http://localhost:8080`. */
  publicUrl?: RunTaskOptions["publicUrl"];
  /** Origin of the UI for `run_app_url`/`workspace_app_url` in run task requests. Default: `publicUrl`. */
  appUrl?: RunTaskOptions["appUrl"];
  /** decision D13: a failed mandatory run task sends its stage to `awaiting_override`. Default false. */
  overridableTasks?: RunTaskOptions["overridableTasks"];
  /** decision D16: default a fixed 10 minutes; `{ idle: "10m", max: "60m" }` for the newer rule. */
  deadline?: RunTaskOptions["deadline"];
  /** `User-Agent` of run task requests (decision D1). Default `runplane/<version>`. */
  userAgent?: RunTaskOptions["userAgent"];
  /**
   * decision D15: the SSRF guard of outbound HTTP. Only public unicast addresses are reached unless
   * `allow` lists CIDRs (`"10.0.0.0/8"`, `"127.0.0.1/32"`) or exact host names; `resolve` replaces
   * the system resolver. Run task URLs are checked against it when saved and when sent.
   */
  egress?: { allow?: readonly string[]; resolve?: Resolver };
  /**
   * Outbound HTTP for verification requests and, by default, the dispatcher's run task requests.
   * Default: `createEgress({ ...egress, userAgent })`, closed by `close()`. A transport you pass is
   * yours to configure (its own SSRF guard) and close; `egress.allow` still governs the save-time
   * URL check.
   */
  transport?: HttpTransport;
  /**
   * Repeated reads of a workspace's variables are answered from memory while the storage's revision
   * counters (`Storage.revisions`) say nothing they depend on changed; every request still reads
   * those counters, so writes from any process are seen at once. On only with the default
   * authenticator and a storage that keeps revisions. Default `{ maxBytes: 8 MiB }`; `false` turns it off.
   */
  readCache?: false | { maxBytes?: number };
}

const isKeyring = (k: Keyring | KeyringOptions): k is Keyring => "seal" in k;

function normalizeBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, "");
  if (trimmed !== "" && !trimmed.startsWith("/")) throw new Error("basePath must start with /");
  return trimmed;
}

/**
 * Creates a runplane instance: `handler` serves the HCP Terraform v2 JSON:API as a Web-standard
 * `(Request) => Promise<Response>`; the other members are the programmatic API the host calls directly.
 */
export function createRunplane(options: RunplaneOptions) {
  const logger = options.logger ? toLogger(options.logger) : createConsoleLogger();
  let keyring: Keyring;
  if (options.keyring) keyring = isKeyring(options.keyring) ? options.keyring : createKeyring(options.keyring);
  else {
    logger.warn("no keyring configured: using an ephemeral key; sensitive values will not survive a restart");
    keyring = createKeyring({ keys: [{ id: "ephemeral", key: generateKey() }] });
  }
  const clock = options.clock ?? (() => new Date());
  const settings = resolveRunTaskSettings(options);
  const dialect = options.dialect ?? "default";
  // decision D15: one guarded transport for every outbound request of this instance.
  const transport = options.transport ?? createEgress({ ...options.egress, userAgent: settings.userAgent });
  const taskEndpointCheck = createTaskEndpointCheck({
    transport,
    policy: createEgressPolicy({ allow: options.egress?.allow ?? [] }),
    urls: settings,
    dialect,
    userAgent: settings.userAgent,
    now: clock,
  });
  const ctx: ServiceContext = {
    storage: options.storage,
    keyring,
    logger,
    dialect,
    now: clock,
    newId,
    runTasks: settings,
    taskEndpointCheck,
  };
  const services = createServices(ctx);
  const basePath = normalizeBasePath(options.basePath ?? "/api/v2");

  // decision D21: the permission resolver decides every route through the route-permission table.
  const authorizer: Authorizer = createAuthorizer(ctx);
  const app: HttpApp = {
    basePath,
    dialect: ctx.dialect,
    jsonapi: createJsonApi([teamProjectResource(basePath), variableResource(basePath), policySetParameterResource(basePath), agentTokenResource(basePath), ...runTaskResources(basePath), ...taskStageResources(basePath)]),
    services,
    authorizer,
    logger,
  };
  const routes: Route[] = [...pingRoutes, ...teamProjectRoutes, ...variableRoutes, ...policySetParameterRoutes, ...agentTokenRoutes, ...runTaskRoutes, ...taskStageRoutes];
  const authenticate: Authenticate = options.authenticate ?? createTokenAuthenticator(ctx);
  // The read cache keys entries by bearer token: only the default authenticator reads nothing else.
  const caching =
    options.readCache !== false && options.authenticate === undefined && options.storage.revisions
      ? {
          cache: createReadCache({ maxBytes: options.readCache?.maxBytes, maxAgeMs: TOUCH_INTERVAL_MS, now: () => clock().getTime() }),
          revisions: options.storage.revisions,
        }
      : undefined;
  const handler = createHandler(app, routes, authenticate, caching);

  return {
    /** The HTTP API as `(Request) => Promise<Response>`; mount it with your framework. */
    handler,
    /** Workspace variables (spec 2.5); `resolveForRun` returns plaintext for the host's run. */
    variables: services.variables,
    /** Policy set parameters (spec 2.4); `resolveForEvaluation` returns plaintext pairs. */
    policySetParameters: services.policySetParameters,
    /**
     * Agent pool authentication tokens (spec 2.7, decision D22): `create(poolId, { description,
     * createdBy })` returns the token string once; `verify(token)` resolves `{ tokenId, agentPoolId }`
     * or null in constant time and records `last-used-at`.
     */
    agentTokens: services.agentTokens,
    /**
     * Team access to projects (spec 2.6, decisions D19-D21), unchecked (the host's trusted code):
     * `list(projectId, { teamId?, teamIds?, page? })`, `get(id)`, `create(projectId, teamId,
     * attributes)`, `update(id, attributes)`, `delete(id)`. Attributes are the wire attributes
     * (`access`, `project-access`, `workspace-access`); a fixed level shows its implied permissions.
     */
    teamProjects: services.teamProjects,
    /**
     * Run tasks (spec 1-4.3, decisions D13-D18), unchecked (the host's trusted code):
     * `tasks.*` and `workspaceTasks.*` configure them; `createRun(input)` snapshots a workspace's
     * enabled tasks into pending stages and results (idempotent per run id); `startStage(runId,
     * stage)` starts a stage, issues callback tokens and enqueues deliveries in one step;
     * `cancelRun`, `override`, `getStage`, `listStages`; `callback(resultId, token, body)` and
     * `receiveCallback(resultId, token, readBody)` (reads the body only once the token holds, D26);
     * `verifyAccessToken(token)` for plan and configuration downloads; `on("stage-status" | "result-status", listener)` after each stored change.
     */
    runTasks: services.runTasks,
    /** Host-side records (organizations, projects, workspaces, teams, users, policy sets, agent pools, API tokens). */
    directory: services.directory,
    /** Moves every sealed value (variables, parameters, run task HMAC keys) to the keyring's active key (D11); resolves the number of rows rewritten. */
    reencrypt: async () => (await services.varEngine.reencrypt()) + (await services.runTasks.tasks.reencrypt()),
    /** The routes served by `handler`, for documentation and tests. */
    routes: routes.map((r) => ({ method: r.method, path: `${basePath}${r.path}` })),
    /**
     * The API's own credential checks, for pages and tools the host serves next to it:
     * `authenticate(request)` resolves the caller (or null, 401), `authorize(principal, action,
     * target)` decides an action such as `runs:read` on `{ organization, projectId?, workspaceId? }`
     * exactly as the routes do (D4, D21).
     */
    auth: { authenticate, authorize: authorizer },
    /**
     * Outbound HTTP (decision D15): the SSRF-guarded transport verification requests use and
     * `createDispatcher` sends run task requests through unless given its own.
     */
    transport,
    /** Closes the storage, and the transport when runplane created it. */
    close: async () => {
      await services.runTasks.close();
      if (options.transport === undefined) await transport.close();
      await options.storage.close();
    },
  };
}
export type Runplane = ReturnType<typeof createRunplane>;

export { ApiError, ERROR_CODES, STATUS_BY_CODE, isApiError, type ErrorCode } from "./errors.js";
export { createKeyring, generateKey, type Keyring, type KeyringOptions, type KeyringKey } from "./crypto/keyring.js";
export { createConsoleLogger, silentLogger, type ConsoleLoggerOptions, type LogLevel, type Logger, type PinoLikeLogger } from "./logger.js";
export { maskedValue } from "./domain/masking.js";
export { checkSensitivePatch } from "./domain/variable-rules.js";
export type { Principal, OrgPermission, Dialect } from "./schemas/common.js";
export { ORG_PERMISSIONS, PrincipalSchema } from "./schemas/common.js";
export type { Organization, Project, Workspace, Team, User, PolicySet, AgentPool } from "./schemas/directory.js";
export type { VariableView, ResolvedVariable } from "./schemas/variables.js";
export type { AgentTokenView, AgentTokenCreator, VerifiedAgentToken } from "./schemas/agent-tokens.js";
export type * from "./storage/types.js";
export type * from "./schemas/records.js";
export type { TaskStageView, TaskResultView, OutcomeView } from "./schemas/task-stage-views.js";
export type { TaskCreate, TaskUpdate, TaskView, WorkspaceTaskCreate, WorkspaceTaskUpdate, WorkspaceTaskView, CreateRunInput } from "./schemas/run-task-config.js";
export type { RunTaskOptions, Duration } from "./services/run-task-settings.js";
export type { StageStatusEvent, ResultStatusEvent, RunTaskEvents, RunTaskListener } from "./services/run-task-events.js";
export type { CreatedRun } from "./services/run-creation.js";
export { createDispatcher, DISPATCHER_FAILPOINTS, type Dispatcher, type DispatcherFailpoint, type DispatcherHost, type DispatcherOptions, type TickReport } from "./delivery/dispatcher.js";
export { createEgress, EgressError, isEgressError, type EgressOptions, type HttpRequest, type HttpResponse, type HttpTransport, type ResolvedAddress, type Resolver } from "./delivery/egress.js";
export type { DeliveryAttempt, DeliveryFailure, TaskDeliveryService } from "./services/task-deliveries.js";
export type { VerifiedAccessToken, OutcomeListOptions } from "./services/task-callback.js";
export type { Authenticate } from "./http/handler.js";
/**
 * The run task results page for people (`GET <prefix>/runs/:run_id`, server-rendered HTML):
 * `createResultsPage(runplane, { prefix: "/app" })` returns a `(Request) => Promise<Response>`.
 */
export { createResultsPage, CONTENT_SECURITY_POLICY, COOKIE_NAME, type ResultsPageOptions, type ResultsPageSource, type RunTarget } from "./results-page/index.js";

// Pure domain functions, exported so hosts unit-test their own policy logic against the same rules.
export {
  ACTIONS,
  ORGANIZATION_ACTIONS,
  can,
  canInOrganization,
  canReadGrant,
  customPermissions,
  impliedPermissions,
  organizationPermissions,
  resolveProjectAccess,
  type Action,
  type Decision,
  type EffectiveAccess,
  type OrganizationAction,
} from "./domain/permissions.js";
export type { AccessLevel, PermissionSet, ProjectAccess, WorkspaceAccess, TeamProjectRecord } from "./schemas/team-projects.js";
export { stageStatusOf, transitionResult, transitionStage, isFinalResultStatus, isFinalStageStatus } from "./domain/stage-machine.js";
export {
  SIGNATURE_HEADERS,
  buildRunTaskRequest,
  serializeRunTaskRequest,
  signPayload,
  signatureHeaderValue,
  verificationRequest,
  verifySignature,
  type RunTaskRequestInput,
} from "./domain/run-task-request.js";
export { toReadTags, compareBySeverity, severityOf, statusOf } from "./domain/outcomes.js";
export { RunTaskRequestSchema, CallbackBodySchema, type RunTaskRequest } from "./schemas/run-tasks.js";
