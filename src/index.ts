import { createKeyring, generateKey, type Keyring, type KeyringOptions } from "./crypto/keyring.js";
import { newId } from "./crypto/random.js";
import { createHandler, type Authenticate } from "./http/handler.js";
import { createJsonApi } from "./http/jsonapi.js";
import { agentTokenResource, agentTokenRoutes } from "./http/routes/agent-tokens.js";
import { teamTokenRoutes } from "./http/routes/team-tokens.js";
import { pingRoutes } from "./http/routes/ping.js";
import { policySetParameterResource, policySetParameterRoutes } from "./http/routes/policy-set-parameters.js";
import { variableResource, variableRoutes } from "./http/routes/variables.js";
import { teamProjectResource, teamProjectRoutes } from "./http/routes/team-projects.js";
import { runTaskResources, runTaskRoutes } from "./http/routes/run-tasks.js";
import { taskStageResources, taskStageRoutes } from "./http/routes/task-stages.js";
import { deliveryAttemptResource, deliveryAttemptRoutes } from "./http/routes/delivery-attempts.js";
import { artifactRoutes } from "./http/routes/artifacts.js";
import type { ArtifactProviders } from "./http/artifact-body.js";
import { runReadResources } from "./http/run-documents.js";
import type { RunProviders } from "./http/run-providers.js";
import { commentRoutes } from "./http/routes/comments.js";
import { planRoutes } from "./http/routes/plans.js";
import { policyCheckRoutes } from "./http/routes/policy-checks.js";
import { runEventRoutes } from "./http/routes/run-events.js";
import { runRoutes } from "./http/routes/runs.js";
import { durationMs, resolveRunTaskSettings, type RunTaskOptions } from "./services/run-task-settings.js";
import type { Authorizer, HttpApp, Route } from "./http/types.js";
import { createConsoleLogger, toLogger, type Logger, type PinoLikeLogger } from "./logger.js";
import type { Dialect } from "./schemas/common.js";
import { createAuthorizer } from "./services/authorizer.js";
import type { ServiceContext } from "./services/context.js";
import { createServices } from "./services/index.js";
import { createKeyringControl } from "./services/keyring-control.js";
import { createHostHeartbeat, type HostOptions } from "./services/host-heartbeat.js";
import { createSessions } from "./services/sessions.js";
import { countSealedValues, reencryptAll } from "./services/sealing.js";
import { createHealthCheck } from "./services/health.js";
import { createTokenAuthenticator, TOUCH_INTERVAL_MS } from "./services/principals.js";
import { createAccessCache } from "./http/access-cache.js";
import { createReadCache } from "./http/read-cache.js";
import { createRateLimit, type RateLimitOptions } from "./http/rate-limit.js";
import type { Storage } from "./storage/types.js";
import { createEgress, createEgressPolicy, type HttpTransport, type Resolver } from "./delivery/egress.js";
import { createTaskEndpointCheck } from "./delivery/verification.js";
import { checkOptions } from "./options.js";
import { buildOpenApiDocument, operationsFor, type OpenApiDocument } from "./openapi/document.js";
import type { Runplane } from "./runplane.js";

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
   * those counters, so writes from any process are seen at once. Every request, reads and writes,
   * also reuses its token's principal and authorization decisions while the directory's counter
   * stands (at most 10,000 entries, one minute each). On only with the default authenticator and a
   * storage that keeps revisions. Default `{ maxBytes: 8 MiB }`; `false` turns both off.
   */
  readCache?: false | { maxBytes?: number };
  /**
   * decision D24: what integrations download with a result's access token (or an API credential
   * with `runs >= read`) from `plan_json_api_url` and `configuration_version_download_url`.
   * `planJson(run)` returns the plan as `terraform show -json` writes it, `configurationVersion(run)`
   * the configuration as a `.tar.gz`: an object (sent as JSON), a string, bytes, a Web or Node
   * stream, or a `Response`; null when there is none (404). Without `configurationVersion`, run
   * task requests carry `configuration_version_download_url: null`. `planLog(run)` and
   * `applyLog(run)` give the logs that a plan's and an apply's `log-read-url` serve (issue 27);
   * without them `log-read-url` is null.
   */
  artifacts?: ArtifactProviders;
  /**
   * Issue 27: what only the host knows of a run, for integrations that read it (`GET /runs/:id`,
   * `/plan`, `/apply`, `/policy-checks`): `details(run)` returns its status and timestamps, has-changes,
   * Terraform version, and its plan's and apply's status and resource counts; `policyChecks(run)`
   * its policy checks; `policyCheckRun(id)` the run id of a policy check, for `GET /policy-checks/:id`
   * (D36). Each may return null. What the host leaves out is left out of the default
   * dialect's documents and written as go-tfe's zero value in the hcp-terraform dialect.
   */
  runs?: RunProviders;
  /**
   * decision D32: a plan's and an apply's `log-read-url` carry their own short-lived credential
   * in the path (no Authorization header, like HCP Terraform's archivist URLs), honoured by every
   * host sharing the keyring for `lifetime` (milliseconds or "90s", "10m", "1h"; 1 minute to 24
   * hours). Default `{ lifetime: "1h" }`.
   */
  logUrls?: { lifetime?: number | string };
  /**
   * decision D31: delivery attempts (the newest 20 per result, with up to 1 KiB of each answer)
   * older than `retention` are removed by the dispatcher's sweep. Default `{ retention: "30d" }`.
   */
  attempts?: RunTaskOptions["attempts"];
  /**
   * Issue 26: when `health()` says deliveries are failing: half or more (`failureShare`) of at
   * least `minAttempts` (5) attempts this process made in the last `window` (5 minutes) failed, or
   * a result has been retrying for longer than `retryingFor` (5 minutes, read from the storage's
   * outbox stats, so it covers every host). Default `{ window: "5m", failureShare: 0.5,
   * minAttempts: 5, retryingFor: "5m" }`.
   */
  health?: RunTaskOptions["health"];
  /**
   * decision D29a: this instance records in the storage the keys it seals with and when it was last
   * alive (`{ name?, intervalMs? }`: default the machine's host name, every 15 s; live for 3
   * intervals), at once when its keyring reloads, and removes the record at `close()`, so
   * `runplane reencrypt --retire` refuses a key a live host still seals with and `runplane doctor`
   * lists the hosts. On by default, off the request path; `false` for a process that never seals.
   */
  host?: false | HostOptions;
  /**
   * decision D33: requests limited per credential, as HCP Terraform limits them: `{}` for its
   * documented 30 requests a second (`requestsPerSecond`, `burst`), answered 429 with
   * `X-RateLimit-Limit`, `X-RateLimit-Reset` (seconds, a decimal) and `Retry-After` beyond it;
   * every limited answer and `GET /ping` carry the `X-RateLimit-*` headers. Task result callbacks
   * count per result instead (`callbacksPerSecond` 1, `callbackBurst` 10). Kept in memory per
   * process (at most `maxKeys`, 10,000, buckets per limiter), so a cluster allows hosts x the
   * figure. Default: no limit (`false`), for a host that limits in its own proxy.
   */
  rateLimit?: false | RateLimitOptions;
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
 * Throws a {@link RunplaneOptionsError} naming the option when one is wrong or unknown (issues 17.4,
 * 24.6), before anything is logged or created.
 */
export function createRunplane(options: RunplaneOptions): Runplane {
  // Every option is checked before anything is logged or created (issue 24.6).
  checkOptions(options);
  const settings = resolveRunTaskSettings(options);
  const logger = options.logger ? toLogger(options.logger) : createConsoleLogger();
  let keyring: Keyring;
  if (options.keyring) keyring = isKeyring(options.keyring) ? options.keyring : createKeyring(options.keyring);
  else {
    logger.warn("no keyring configured: using an ephemeral key; sensitive values will not survive a restart");
    keyring = createKeyring({ keys: [{ id: "ephemeral", key: generateKey() }] });
  }
  const clock = options.clock ?? (() => new Date());
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
  const host = options.host === false ? null : createHostHeartbeat({ storage: options.storage, keyring, logger, now: clock }, options.host);
  const ctx: ServiceContext = {
    storage: options.storage,
    keyring,
    keys: createKeyringControl(keyring, options.storage, logger, host ?? undefined),
    logger,
    dialect,
    now: clock,
    newId,
    runTasks: settings,
    taskEndpointCheck,
    ...(options.logUrls?.lifetime === undefined ? {} : { logUrlLifetimeMs: durationMs(options.logUrls.lifetime)! }),
  };
  const services = createServices(ctx);
  const basePath = normalizeBasePath(options.basePath ?? "/api/v2");

  // decision D21: the permission resolver decides every route through the route-permission table.
  const authorizer: Authorizer = createAuthorizer(ctx);
  const definitions = [
    teamProjectResource(basePath),
    variableResource(basePath, dialect),
    policySetParameterResource(basePath),
    agentTokenResource(basePath),
    ...runTaskResources(basePath),
    ...taskStageResources(basePath),
    deliveryAttemptResource(basePath),
    ...runReadResources(basePath),
  ];
  const app: HttpApp = {
    basePath,
    dialect: ctx.dialect,
    jsonapi: createJsonApi(definitions),
    services,
    authorizer,
    logger,
    artifacts: options.artifacts ?? {},
    runs: options.runs ?? {},
  };
  const routes: Route[] = [...pingRoutes, ...teamProjectRoutes, ...variableRoutes, ...policySetParameterRoutes, ...agentTokenRoutes, ...teamTokenRoutes, ...runTaskRoutes, ...taskStageRoutes, ...deliveryAttemptRoutes, ...artifactRoutes, ...runRoutes, ...planRoutes, ...runEventRoutes, ...commentRoutes, ...policyCheckRoutes];
  const authenticate: Authenticate = options.authenticate ?? createTokenAuthenticator(ctx);
  // The read cache keys entries by bearer token: only the default authenticator reads nothing else.
  const caching =
    options.readCache !== false && options.authenticate === undefined && options.storage.revisions
      ? {
          cache: createReadCache({ maxBytes: options.readCache?.maxBytes, maxAgeMs: TOUCH_INTERVAL_MS, now: () => clock().getTime() }),
          revisions: options.storage.revisions,
          access: createAccessCache({ maxAgeMs: TOUCH_INTERVAL_MS, now: () => clock().getTime() }),
        }
      : undefined;
  const rateLimit = options.rateLimit ? createRateLimit(options.rateLimit, () => clock().getTime()) : undefined;
  const handler = createHandler(app, routes, authenticate, caching, rateLimit);
  // Fails at construction, like the permission table, when a route has no documentation (issue 18).
  operationsFor(routes, dialect);
  let openapi: OpenApiDocument | undefined;

  // Member documentation lives on the Runplane interface (src/runplane.ts).
  return {
    handler,
    variables: services.variables,
    policySetParameters: services.policySetParameters,
    agentTokens: services.agentTokens,
    teamProjects: services.teamProjects,
    runTasks: services.runTasks,
    directory: services.directory,
    reencrypt: () => reencryptAll(ctx),
    sealedValues: () => countSealedValues(ctx.storage),
    keyring: ctx.keys,
    basePath,
    routes: routes.map((r) => ({ method: r.method, path: `${basePath}${r.path}` })),
    openapi: () => (openapi ??= buildOpenApiDocument({ routes, definitions, dialect, basePath })),
    auth: { authenticate, authorize: authorizer, sessions: createSessions(ctx, services.directory) },
    transport,
    health: createHealthCheck(options.storage, services.runTasks.deliveries, settings.health, async () => (host ? host.writeCheck() : null)),
    close: async () => {
      await host?.stop();
      await services.runTasks.close();
      if (options.transport === undefined) await transport.close();
      await options.storage.close();
    },
  };
}
export type { Runplane, AgentTokenService, Directory, PolicySetParameterService, RunplaneHealth, RunTaskService, TeamProjectService, VariableService } from "./runplane.js";

// The documented API only (issue 17.6, house style "a small public surface"): everything else is
// internal. Storage contract types for adapter authors live at `runplane/storage`.
export { RunplaneOptionsError } from "./options.js";
export type { OpenApiDocument } from "./openapi/document.js";
export { ApiError, isApiError, type ErrorCode } from "./errors.js";
export { createKeyring, generateKey, type Keyring, type KeyringOptions, type KeyringKey, type KeyringSource } from "./crypto/keyring.js";
export type { KeyringControl, KeyringReload } from "./services/keyring-control.js";
export type { HostOptions } from "./services/host-heartbeat.js";
export type { SealedValueCounts } from "./services/sealing.js";
export { createConsoleLogger, silentLogger, type ConsoleLoggerOptions, type LogLevel, type Logger, type PinoLikeLogger } from "./logger.js";
export type { Principal, OrgPermission, Dialect } from "./schemas/common.js";
export type { Storage } from "./storage/types.js";
/** decision D28: what a storage adapter (yours too) throws when its database cannot be reached: 503 with `Retry-After`. */
export { StorageUnavailableError, isStorageUnavailableError } from "./storage/unavailable.js";
export type { Organization, Project, Workspace, Team, User, PolicySet, AgentPool } from "./schemas/directory.js";
export type { VariableView, ResolvedVariable } from "./schemas/variables.js";
export type { AgentTokenView, AgentTokenCreator, VerifiedAgentToken } from "./schemas/agent-tokens.js";
export type { TaskStageView, TaskResultView, OutcomeView } from "./schemas/task-stage-views.js";
export type { TaskCreate, TaskUpdate, TaskView, WorkspaceTaskCreate, WorkspaceTaskUpdate, WorkspaceTaskView, CreateRunInput } from "./schemas/run-task-config.js";
export type { RunTaskOptions, Duration, DeliveryHealthOptions } from "./services/run-task-settings.js";
export type { StageStatusEvent, ResultStatusEvent, RunTaskEvents, RunTaskListener } from "./services/run-task-events.js";
export type { CreatedRun } from "./services/run-creation.js";
export { createDispatcher, type Dispatcher, type DispatcherHost, type DispatcherOptions, type TickReport } from "./delivery/dispatcher.js";
export { createEgress, EgressError, isEgressError, type EgressOptions, type HttpRequest, type HttpResponse, type HttpTransport, type ResolvedAddress, type Resolver } from "./delivery/egress.js";
export type { VerifiedAccessToken, OutcomeListOptions } from "./services/task-callback.js";
export type { Authenticate } from "./http/handler.js";
export type { ArtifactBody, ArtifactProvider, ArtifactProviders, ArtifactRun } from "./http/artifact-body.js";
export type { RunProviders } from "./http/run-providers.js";
export type { RateLimitOptions } from "./http/rate-limit.js";
export type { RunDetails, PolicyCheckDetails } from "./schemas/run-details.js";
/**
 * The run task results page for people (`GET <prefix>/runs/:run_id`, server-rendered HTML):
 * `createResultsPage(runplane, { prefix: "/app" })` returns a `(Request) => Promise<Response>`.
 */
export { createResultsPage, type ResultsPageOptions, type ResultsPageSource, type RunTarget } from "./results-page/index.js";

// Pure domain functions (docs/reference/programmatic-api.md, "Pure functions for your own tests"), so hosts unit-test their own
// policy logic against the same rules.
export { can, impliedPermissions, resolveProjectAccess, type Action, type Decision, type EffectiveAccess } from "./domain/permissions.js";
export type { AccessLevel, PermissionSet, ProjectAccess, WorkspaceAccess, TeamProjectRecord } from "./schemas/team-projects.js";
export { stageStatusOf } from "./domain/stage-machine.js";
export { buildRunTaskRequest, signPayload, signatureHeaderValue, verifySignature, type RunTaskRequestInput } from "./domain/run-task-request.js";
export type { RunTaskRequest } from "./schemas/run-tasks.js";
