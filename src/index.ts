import { createKeyring, generateKey, type Keyring, type KeyringOptions } from "./crypto/keyring.js";
import { newId } from "./crypto/random.js";
import { createHandler, type Authenticate } from "./http/handler.js";
import { createJsonApi } from "./http/jsonapi.js";
import { agentTokenResource } from "./http/routes/agent-tokens.js";
import { agentResource } from "./http/routes/agents.js";
import { API_ROUTES } from "./http/routes/all.js";
import { policySetParameterResource } from "./http/routes/policy-set-parameters.js";
import { variableResource } from "./http/routes/variables.js";
import { teamProjectResource } from "./http/routes/team-projects.js";
import { runTaskResources } from "./http/routes/run-tasks.js";
import { taskStageResources } from "./http/routes/task-stages.js";
import { deliveryAttemptResource } from "./http/routes/delivery-attempts.js";
import { runReadResources } from "./http/run-documents.js";
import { durationMs, resolveRunTaskSettings, type RunTaskSettings } from "./services/run-task-settings.js";
import type { Authorizer, HttpApp, Route } from "./http/types.js";
import { createConsoleLogger, toLogger, type Logger } from "./logger.js";
import { createAuthorizer } from "./services/authorizer.js";
import type { ServiceContext } from "./services/context.js";
import { createServices } from "./services/index.js";
import { createKeyringControl } from "./services/keyring-control.js";
import { createHostHeartbeat } from "./services/host-heartbeat.js";
import { createSessions } from "./services/sessions.js";
import { countSealedValues, reencryptAll } from "./services/sealing.js";
import { createHealthCheck } from "./services/health.js";
import { createTokenAuthenticator, TOUCH_INTERVAL_MS } from "./services/principals.js";
import { createAccessCache } from "./http/access-cache.js";
import { createReadCache } from "./http/read-cache.js";
import { createRateLimit } from "./http/rate-limit.js";
import { createEgress, createEgressPolicy, ownInterfaceAddresses } from "./delivery/egress.js";
import { createTaskEndpointCheck } from "./delivery/verification.js";
import { createAgentSessions, sendHere } from "./delivery/agent-sessions.js";
import { createAgentRelay } from "./delivery/agent-relay.js";
import { createAgentTransport } from "./delivery/agent-transport.js";
import { readPoolPresence } from "./services/pool-presence.js";
import { createAgentHub, type AgentHub } from "./services/agent-hub.js";
import { AGENT_PROTOCOL_PREFIX, createAgentProtocolHandler } from "./http/routes/agent-protocol.js";
import { checkOptions } from "./options.js";
import { buildOpenApiDocument, operationsFor, type OpenApiDocument } from "./openapi/document.js";
import type { Runplane } from "./runplane.js";
import type { RunplaneOptions } from "./runplane-options.js";
import { createTelemetry } from "./telemetry/providers.js";
import { clientAddress, type Connection } from "./http/client-address.js";

export type { RunplaneOptions } from "./runplane-options.js";

const isKeyring = (k: Keyring | KeyringOptions): k is Keyring => "seal" in k;

function normalizeBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, "");
  if (trimmed !== "" && !trimmed.startsWith("/")) throw new Error("basePath must start with /");
  return trimmed;
}

/** The keyring of `options`, or an ephemeral one (with a warning: sealed values then die with the process). */
function openKeyring(options: RunplaneOptions, logger: Logger): Keyring {
  if (options.keyring) return isKeyring(options.keyring) ? options.keyring : createKeyring(options.keyring);
  logger.warn("no keyring configured: using an ephemeral key; sensitive values will not survive a restart");
  return createKeyring({ keys: [{ id: "ephemeral", key: generateKey() }] });
}

/** What every service is built from (`ServiceContext`), with the transport and host record it wires in. */
function createContext(options: RunplaneOptions, settings: RunTaskSettings) {
  const logger = options.logger ? toLogger(options.logger) : createConsoleLogger();
  const keyring = openKeyring(options, logger);
  const clock = options.clock ?? (() => new Date());
  const dialect = options.dialect ?? "default";
  // decision D15: one guarded transport for every outbound request of this instance.
  const transport = options.transport ?? createEgress({ ...options.egress, userAgent: settings.userAgent });
  const taskEndpointCheck = createTaskEndpointCheck({
    transport,
    policy: createEgressPolicy({ allow: options.egress?.allow ?? [], wide: options.egress?.wide === true, ownAddresses: ownInterfaceAddresses }),
    urls: settings,
    dialect,
    userAgent: settings.userAgent,
    now: clock,
  });
  const host = options.host === false ? null : createHostHeartbeat({ storage: options.storage, keyring, logger, now: clock }, options.host);
  // decision D34: the agents polling this host; a silent one reads `unknown` until it polls again.
  const agentHub = createAgentHub({
    newId,
    onSilent: (session) => void options.storage.agents.setStatus(session.agentId, ["idle", "busy"], "unknown").catch(() => null),
  });
  const relay = agentsElsewhere(options.storage, agentHub, newId, clock);
  const ctx: ServiceContext = {
    storage: options.storage,
    keyring,
    // decision D40: a keyring given as options is checked against the live hosts at start.
    keys: createKeyringControl(keyring, options.storage, logger, host ?? undefined, clock, options.keyring && !isKeyring(options.keyring) ? options.keyring : undefined),
    logger,
    dialect,
    now: clock,
    newId,
    runTasks: settings,
    taskEndpointCheck,
    agentSessions: createAgentSessions(agentHub, { urls: settings, dialect, userAgent: settings.userAgent, now: clock, ...(relay ? { elsewhere: relay } : {}) }),
    // decision D50: the providers given, or the global ones followed (registered before or after this).
    telemetry: createTelemetry({ meterProvider: options.meterProvider, tracerProvider: options.tracerProvider }),
    ...(options.logUrls?.lifetime === undefined ? {} : { logUrlLifetimeMs: durationMs(options.logUrls.lifetime)! }),
  };
  return { ctx, transport, host, agentHub, relay: relay?.relay ?? null };
}

/**
 * decision D34: with a storage shared by several hosts (`Storage.relay`), a pool task's
 * verification goes through an agent of the pool connected to any host.
 */
function agentsElsewhere(storage: RunplaneOptions["storage"], hub: AgentHub, newId: (prefix: string) => string, clock: () => Date) {
  if (!storage.relay) return null;
  const transport = createAgentTransport(hub);
  const relay = createAgentRelay(storage.relay, hub, (req, pool) => sendHere(hub, transport, req, pool), newId("host"), () => newId("rly"));
  const connected = async (pool: string): Promise<boolean> => (await readPoolPresence(storage, pool, clock()).catch(() => null))?.connected ?? false;
  return { connected, relay };
}

const ROUTES: readonly Route[] = API_ROUTES;

/** The API's handler: resources, routes, authentication, the read and access caches, the rate limit. */
function createApi(ctx: ServiceContext, options: RunplaneOptions, services: ReturnType<typeof createServices>, basePath: string, agentHub: AgentHub) {
  const { dialect, logger } = ctx;
  const clock = ctx.now;
  // decision D21: the permission resolver decides every route through the route-permission table.
  const authorizer: Authorizer = createAuthorizer(ctx);
  const definitions = [
    teamProjectResource(basePath),
    variableResource(basePath, dialect),
    policySetParameterResource(basePath),
    agentTokenResource(basePath),
    agentResource(basePath),
    ...runTaskResources(basePath),
    ...taskStageResources(basePath),
    deliveryAttemptResource(basePath),
    ...runReadResources(basePath),
  ];
  const app: HttpApp = {
    clientAddress: clientAddressReader(options),
    basePath,
    dialect,
    jsonapi: createJsonApi(definitions),
    services,
    authorizer,
    logger,
    telemetry: ctx.telemetry,
    artifacts: options.artifacts ?? {},
    runs: options.runs ?? {},
  };
  const routes: Route[] = [...ROUTES];
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
  // decision D33: a verified log capability is counted per log, never with anonymous requests.
  const verifyLog = (capability: string): string | null => {
    const granted = services.logs.verify(capability);
    return granted ? `${granted.runId} ${granted.kind}` : null;
  };
  const rateLimit = options.rateLimit ? createRateLimit(options.rateLimit, () => clock().getTime(), verifyLog) : undefined;
  const api = createHandler(app, routes, authenticate, caching, rateLimit);
  // decision D34: the agent protocol is served by the same handler, under its own prefix.
  const agentProtocol = createAgentProtocolHandler({ hub: agentHub, agents: services.agents, agentTokens: services.agentTokens, logger, clientAddress: app.clientAddress, ...(rateLimit ? { rateLimit } : {}) });
  const handler = (request: Request, connection?: Connection): Promise<Response> =>
    request.url.includes(AGENT_PROTOCOL_PREFIX) && new URL(request.url).pathname.startsWith(AGENT_PROTOCOL_PREFIX) ? agentProtocol(request, connection) : api(request, connection);
  // Fails at construction, like the permission table, when a route has no documentation.
  operationsFor(routes, dialect);
  return { handler, routes, definitions, authorizer, authenticate };
}

/** decision D62: the client's address of a request, as option `trustProxy` says to read it. */
const clientAddressReader =
  (options: RunplaneOptions) =>
  (request: Request, connection?: Connection): string | null =>
    clientAddress(request, connection, options.trustProxy ?? 0);

/** decision D34: a revoked agent token ends its agents' sessions on this host at once (other hosts re-check). */
function revokeSessionsOnDelete(services: ReturnType<typeof createServices>, hub: AgentHub): void {
  const remove = services.agentTokens.delete;
  services.agentTokens.delete = async (tokenId) => {
    await remove(tokenId);
    hub.revokeToken(tokenId);
  };
}

/**
 * Creates a runplane instance: `handler` serves the HCP Terraform v2 JSON:API as a Web-standard
 * `(Request) => Promise<Response>`; the other members are the programmatic API the host calls directly.
 * Throws a {@link RunplaneOptionsError} naming the option when one is wrong or unknown, before
 * anything is logged or created.
 */
export function createRunplane(options: RunplaneOptions): Runplane {
  // Every option is checked before anything is logged or created.
  checkOptions(options);
  const settings = resolveRunTaskSettings(options);
  const { ctx, transport, host, agentHub, relay } = createContext(options, settings);
  const services = createServices(ctx);
  revokeSessionsOnDelete(services, agentHub);
  const basePath = normalizeBasePath(options.basePath ?? "/api/v2");
  const { handler, routes, definitions, authorizer, authenticate } = createApi(ctx, options, services, basePath, agentHub);
  const dialect = ctx.dialect;
  let openapi: OpenApiDocument | undefined;

  // Member documentation lives on the Runplane interface (src/runplane.ts).
  return {
    handler,
    clientAddress: clientAddressReader(options),
    variables: services.variables,
    policySetParameters: services.policySetParameters,
    agentTokens: services.agentTokens,
    teamProjects: services.teamProjects,
    runTasks: services.runTasks,
    directory: services.directory,
    audit: services.audit,
    reencrypt: () => reencryptAll(ctx),
    sealedValues: () => countSealedValues(ctx.storage),
    keyring: ctx.keys,
    basePath,
    routes: routes.map((r) => ({ method: r.method, path: `${basePath}${r.path}` })),
    openapi: () => (openapi ??= buildOpenApiDocument({ routes, definitions, dialect, basePath })),
    auth: { authenticate, authorize: authorizer, sessions: createSessions(ctx, services.directory) },
    transport,
    agentHub,
    health: createHealthCheck(options.storage, services.runTasks.deliveries, settings.health, async () => (host ? host.writeCheck() : null)),
    close: async () => {
      agentHub.close();
      await relay?.stop();
      await host?.stop();
      await services.runTasks.close();
      if (options.transport === undefined) await transport.close();
      await options.storage.close();
    },
  };
}
export type { Runplane, AgentTokenService, Directory, PolicySetParameterService, RunplaneHealth, RunTaskService, TeamProjectService, VariableService } from "./runplane.js";

// The documented API only (house style "a small public surface"): everything else is
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
