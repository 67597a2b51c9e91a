import { createKeyring, generateKey, type Keyring, type KeyringOptions } from "./crypto/keyring.js";
import { newId } from "./crypto/random.js";
import { createHandler, type Authenticate } from "./http/handler.js";
import { createJsonApi } from "./http/jsonapi.js";
import { pingRoutes } from "./http/routes/ping.js";
import { policySetParameterResource, policySetParameterRoutes } from "./http/routes/policy-set-parameters.js";
import { variableResource, variableRoutes } from "./http/routes/variables.js";
import type { Authorizer, HttpApp, Route } from "./http/types.js";
import { createConsoleLogger, type Logger } from "./logger.js";
import type { Dialect } from "./schemas/common.js";
import { authorizeOwnersOnly } from "./services/authorize.js";
import type { ServiceContext } from "./services/context.js";
import { createServices } from "./services/index.js";
import { createTokenAuthenticator } from "./services/principals.js";
import type { Storage } from "./storage/types.js";

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
  /** Structured logger. Default: warnings and errors as JSON lines on stderr. */
  logger?: Logger;
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
  const logger = options.logger ?? createConsoleLogger();
  let keyring: Keyring;
  if (options.keyring) keyring = isKeyring(options.keyring) ? options.keyring : createKeyring(options.keyring);
  else {
    logger.warn("no keyring configured: using an ephemeral key; sensitive values will not survive a restart");
    keyring = createKeyring({ keys: [{ id: "ephemeral", key: generateKey() }] });
  }
  const clock = options.clock ?? (() => new Date());
  const ctx: ServiceContext = {
    storage: options.storage,
    keyring,
    logger,
    dialect: options.dialect ?? "default",
    now: clock,
    newId,
  };
  const services = createServices(ctx);
  const basePath = normalizeBasePath(options.basePath ?? "/api/v2");

  const authorizer: Authorizer = authorizeOwnersOnly;
  const app: HttpApp = {
    basePath,
    dialect: ctx.dialect,
    jsonapi: createJsonApi([variableResource(basePath), policySetParameterResource(basePath)]),
    services,
    authorizer,
    logger,
  };
  const routes: Route[] = [...pingRoutes, ...variableRoutes, ...policySetParameterRoutes];
  const handler = createHandler(app, routes, options.authenticate ?? createTokenAuthenticator(ctx));

  return {
    /** The HTTP API as `(Request) => Promise<Response>`; mount it with your framework. */
    handler,
    /** Workspace variables (spec 2.5); `resolveForRun` returns plaintext for the host's run. */
    variables: services.variables,
    /** Policy set parameters (spec 2.4); `resolveForEvaluation` returns plaintext pairs. */
    policySetParameters: services.policySetParameters,
    /** Host-side records (organizations, projects, workspaces, teams, users, policy sets, agent pools, API tokens). */
    directory: services.directory,
    /** Moves every sealed value to the keyring's active key (D11); resolves the number of rows rewritten. */
    reencrypt: () => services.varEngine.reencrypt(),
    /** The routes served by `handler`, for documentation and tests. */
    routes: routes.map((r) => ({ method: r.method, path: `${basePath}${r.path}` })),
    /** Closes the storage. */
    close: () => options.storage.close(),
  };
}
export type Runplane = ReturnType<typeof createRunplane>;

export { ApiError, ERROR_CODES, STATUS_BY_CODE, isApiError, type ErrorCode } from "./errors.js";
export { createKeyring, generateKey, type Keyring, type KeyringOptions, type KeyringKey } from "./crypto/keyring.js";
export { createConsoleLogger, silentLogger, type Logger } from "./logger.js";
export { maskedValue } from "./domain/masking.js";
export { checkSensitivePatch } from "./domain/variable-rules.js";
export type { Principal, OrgPermission, Dialect } from "./schemas/common.js";
export { ORG_PERMISSIONS, PrincipalSchema } from "./schemas/common.js";
export type { Organization, Project, Workspace, Team, User, PolicySet, AgentPool } from "./schemas/directory.js";
export type { VariableView, ResolvedVariable } from "./schemas/variables.js";
export type * from "./storage/types.js";
export type * from "./schemas/records.js";
