import { Hono, type Context } from "hono";
import { getConnInfo } from "@hono/node-server/conninfo";
import { createDispatcher, createResultsPage, createRunplane, type Runplane } from "../../src/index.js";
import { demoArtifacts } from "./artifacts.js";
import { createDemoApplyLog, createDemoRunProviders, demoPlanLog } from "./run-details.js";
import { DEMO, seedDemo } from "./demo.js";
import { createDemoRuns } from "./demo-runs.js";
import { preflight } from "./checks.js";
import { RATE_LIMIT_DEFAULT, wideEgressWarning } from "./config.js";
import { demoTasksNote, ensureDemoTasks, externalIntegration, listen, startIntegration } from "./integration.js";
import { keyringFileOf, reloadableKeyring, watchKeyring } from "./keyring-file.js";
import { lockDataDir } from "./lock.js";
import { describeRevoked, ownersToken } from "./owners-token.js";
import { openDataDir } from "./state.js";
import { installMetrics, mountObservability, serverLogger } from "./observability.js";
import { openServerStorage, startingResponse } from "./storage.js";
import { demoTarget } from "./demo-target.js";
import { importOptional } from "../../src/optional-peer.js";
import { liveHosts, publicUrlNote } from "./check-hosts.js";

/**
 * The reference server: runplane mounted in Hono over an embedded SQLite file, or over PostgreSQL
 * shared by any number of hosts, with demo records, the outbox dispatcher, and the bundled example
 * run task integration on the loopback address.
 * Environment: PORT (8080), HOST (127.0.0.1), DATA_DIR (./data), ADMIN_TOKEN (optional owners token),
 * RUNPLANE_DIALECT (`hcp-terraform` for real-client category words and signature header),
 * LOG_LEVEL (info), LOG_URL_LIFETIME (1h), INTEGRATION_PORT (8081; the example integration, always on 127.0.0.1), PUBLIC_URL (default: the
 * bound address; integrations call back there), EGRESS_ALLOW (more private destinations run tasks
 * may point at, comma-separated), EGRESS_ALLOW_WIDE (1: accept wide entries), EGRESS_EXCERPTS
 * (full: keep answers of allowlisted destinations whole). For PostgreSQL: DATABASE_URL (`postgres://...`),
 * DATABASE_SCHEMA (public), DATABASE_POOL_SIZE (10). For hosts sharing no DATA_DIR: RUNPLANE_KEYRING
 * (the keyring file's JSON), INTEGRATION_HMAC_KEY; INTEGRATION_URL points the demo tasks at an
 * integration the host does not start itself. examples/server/config.ts reads them.
 */
// The checks `runplane doctor` prints, before anything is created, bound or logged.
const config = await preflight(process.env);
const { port, host, integrationPort, dialect } = config;
// Before the data directory is made: without the driver the start ends creating nothing.
if (!config.databaseUrl) await importOptional(() => import("better-sqlite3"), "better-sqlite3", "serve on the SQLite file (without DATABASE_URL)");
const dataDir = openDataDir(config.dataDir);
// One server per DATA_DIR, checked before anything is bound or revoked; PostgreSQL hosts sharing one ADMIN_TOKEN share it on purpose.
const lock = config.databaseUrl && config.adminToken ? null : lockDataDir(config.dataDir);

// Bind first: runplane's publicUrl (callback URLs) needs the real port when PORT=0. Requests that
// arrive before the app is ready get a JSON:API 503 that says when to try again.
let app: Hono | null = null;
const http = await listen((request, env) => (app ? app.fetch(request, env) : startingResponse()), port, host, "PORT");
// The address this host bound; PUBLIC_URL (a load balancer, another host) may differ from it.
const bound = `http://${host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host}:${http.port}`;
const origin = config.publicUrl ?? bound;

// The integration listens before the demo tasks are saved: saving sends it the verification request.
const hmacKey = dataDir.integrationHmacKey();
const integration = config.integrationUrl
  ? externalIntegration(config.integrationUrl)
  : await startIntegration({ hmacKey, port: integrationPort });
// `doctor` beside this server without PORT reads where it listens from the lock.
lock?.listening({ port: http.port, ...(config.integrationUrl ? {} : { integrationPort: Number(new URL(integration.url).port) }) });

const store = await openServerStorage({
  databaseUrl: config.databaseUrl,
  schema: config.databaseSchema,
  poolSize: config.poolSize,
  sqlitePath: dataDir.database,
});
// Before createRunplane: its instruments bind to the provider registered when it is built.
const observed = await installMetrics();
const build = (allow: string[]): Runplane =>
  createRunplane({
    storage: store.storage,
    // decision D29: keyring.json is read again on SIGHUP, when it changes, and for a key it lacks.
    keyring: reloadableKeyring(dataDir.keyring(), keyringFileOf(config.dataDir, process.env)),
    dialect,
    logger: serverLogger(config.logLevel),
    publicUrl: origin,
    // decision D15: private addresses stay refused, except the demo integration's address on its
    // port and what the operator names in EGRESS_ALLOW.
    // decision D38: wide entries only with EGRESS_ALLOW_WIDE; answers of allowlisted destinations
    // kept as their status line unless EGRESS_EXCERPTS=full.
    egress: { allow: [...allow, ...config.egressAllow], wide: config.egressAllowWide, excerpts: config.egressExcerpts },
    // decision D24: the plan JSON and configuration archive the integration downloads, and
    // (D32) the plan's and the apply's logs, read at their `log-read-url` without a credential.
    artifacts: { ...demoArtifacts, planLog: demoPlanLog, applyLog: createDemoApplyLog(stagesOf) },
    // What only the host knows of a run, for integrations that read it (D24); the demo reads
    // its runs' task stages (`runplane` is set before any request can ask).
    runs: createDemoRunProviders(stagesOf),
    // decision D33: per-credential limits as HCP Terraform has them (RATE_LIMIT, "off" for none).
    rateLimit: config.rateLimit === false ? false : { requestsPerSecond: config.rateLimit },
    // decision D32: how long a plan's or apply's `log-read-url` works (LOG_URL_LIFETIME, default 1h).
    logUrls: { lifetime: config.logUrlLifetimeMs },
    // decision D62: proxies in front that append to X-Forwarded-For (TRUST_PROXY, default 0).
    trustProxy: config.trustProxy,
  });
let runplane!: Runplane;
const stagesOf = async (runId: string) => (await runplane.runTasks.listStages(runId)).items;
// Checked and written once, however many hosts start together on one database; the demo tasks'
// target is read under the same lock, so hosts starting together share it (D27).
const { token, fromEnv, revoked, target } = await closedIfRefused(() =>
  store.exclusively(async () => {
    const target = await demoTarget(store.storage, integration, Boolean(config.databaseUrl && !config.integrationUrl));
    runplane = build(target.allow);
    // decision D40: before the demo seals anything, seal with a key every live host holds.
    await runplane.keyring.ready();
    // decision D52: the demo tasks are created on the database's first start only.
    const seed = await seedDemo(runplane);
    await ensureDemoTasks(runplane, { url: target.url, hmacKey, keep: target.keep, seed });
    return { ...(await ownersToken(runplane, store.storage, dataDir, config.adminToken)), target };
  }),
);

/**
 * A start that refuses once runplane is built (a revoked ADMIN_TOKEN, a demo step that fails)
 * closes it before the CLI's one-line report exits: its host record goes (D29a), so no refused pid
 * lingers as a live host in `doctor` and blocks `reencrypt --retire`, on SQLite and PostgreSQL alike.
 */
async function closedIfRefused<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    await (runplane as Runplane | undefined)?.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw error;
  }
}

watchKeyring(runplane, keyringFileOf(config.dataDir, process.env), (line) => void process.stdout.write(`${line}\n`));
const dispatcher = createDispatcher(runplane, { pollIntervalMs: 250 });
dispatcher.start();

const demoRuns = createDemoRuns(runplane, { publicUrl: origin });
const routes = new Hono();
// decision D62: the connection's address, for the audit trail and agents (TRUST_PROXY for a proxy in front).
const connection = (c: Context) => ({ remoteAddress: getConnInfo(c).remote.address ?? null });
routes.all("/api/v2/*", (c) => runplane.handler(c.req.raw, connection(c)));
routes.all("/api/v2", (c) => runplane.handler(c.req.raw, connection(c)));
// decision D34: agents of agent pools connect here (`runplane agent --url <this origin>`).
routes.all("/api/agent/v1/*", (c) => runplane.handler(c.req.raw, connection(c)));
routes.get("/", (c) => c.text("runplane reference server: the API is under /api/v2, its OpenAPI description at /openapi.json\n"));
// The OpenAPI 3.1 description of the API, generated from runplane's zod schemas.
routes.get("/openapi.json", (c) => c.json(runplane.openapi()));
// GET /metrics (Prometheus text format) and GET /healthz (examples/server/observability.ts).
mountObservability(routes, observed.scrape, runplane, dispatcher, { metricsToken: config.metricsToken });
// The run task results page for people, signed in with an API token (or a bearer header).
// Behind a proxy that terminates TLS the request is plain HTTP: the public URL says how browsers come.
const resultsPage = createResultsPage(runplane, { prefix: "/app", ...(origin.startsWith("https:") ? { secureCookie: true } : {}) });
routes.all("/app/*", (c) => resultsPage(c.req.raw, connection(c)));
routes.all("/app", (c) => resultsPage(c.req.raw, connection(c)));
// Example only, outside the API: walks a demo run through its task stages (examples/server/demo-runs.ts).
routes.all("/demo/runs", (c) => demoRuns.handler(c.req.raw));
app = routes;

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`received ${signal}, shutting down\n`);
  let code = 0;
  try {
    const closed = http.close();
    // Agents' waiting polls answer now (their sessions end), so they stop holding connections open.
    runplane.agentHub.close();
    // Runs still played in the background (D47) stop where they are: their stages stay as stored.
    const demoStopped = demoRuns.close();
    await dispatcher.stop({ graceMs: 5_000 });
    await integration.close();
    await closed;
    await demoStopped;
    await runplane.close();
    await store.close();
    await observed.shutdown();
  } catch (error) {
    process.stderr.write(`shutdown failed: ${error instanceof Error ? error.name : typeof error}\n`);
    code = 1;
  }
  process.exit(code);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));

// The banner last: once it is printed, SIGTERM and SIGINT shut the server down cleanly.
const api = `${origin}/api/v2`;
const auth = fromEnv ? '-H "Authorization: Bearer $ADMIN_TOKEN"' : `-H "Authorization: Bearer ${token}"`;
const egressNote = config.egressAllow.length ? ` and EGRESS_ALLOW ${config.egressAllow.join(", ")}` : " (EGRESS_ALLOW names more)";
process.stdout.write(
  [
    // The address this host bound: several hosts behind one PUBLIC_URL each say their own.
    `runplane listening on ${bound}/api/v2`,
    ...(origin !== bound ? [`public URL (callbacks and links): ${api}`] : []),
    // Several hosts without PUBLIC_URL: callbacks would name one host and die with it (D27).
    ...(config.databaseUrl && !config.publicUrl ? [publicUrlNote(await liveHosts(store.storage))] : []),
    `storage: ${store.description}`,
    // decision D1: the dialect decides the signature header, so say it and how to switch.
    dialect === "hcp-terraform"
      ? "dialect: hcp-terraform (signs with X-TFC-Task-Signature, category word terraform)"
      : "dialect: default (signs with X-SVC-Task-Signature, category word config); go-tfe, the Terraform provider and existing HCP Terraform integrations need RUNPLANE_DIALECT=hcp-terraform",
    `results page: ${origin}/app/runs/<run id>, ${origin}/app/ (your organizations, workspaces and recent runs), ${origin}/app/<organization>/<workspace>[/runs/<run id>]`,
    // Found from outside: every results page was named but the organization's audit trail.
    // The verify command as it must be run for this server's data (found from outside: a bare one looked in ./data).
    `audit trail (owners): ${origin}/app/${DEMO.organization}/-/audit, GET ${api}/organization/audit-trail; runplane audit verify --data-dir ${config.dataDir}${config.databaseUrl ? " (with this DATABASE_URL and DATABASE_SCHEMA)" : ""} checks its chain`,
    observed.off ? `health: ${origin}/healthz, OpenAPI: ${origin}/openapi.json; ${observed.off}` : `metrics: ${origin}/metrics, health: ${origin}/healthz, OpenAPI: ${origin}/openapi.json`,
    target.keep
      ? `example integration: the demo tasks use ${target.url}, the bundled integration of the host that saved them first (hosts on one database share it; this host's own listens at ${integration.url})`
      : `example integration: ${integration.url} (${await demoTasksNote(runplane)})`,
    `egress: run tasks may reach public addresses, the example integration (${target.allow.join(", ")})${egressNote}`,
    // decision D38: a wide allowlist is the operator's explicit choice, and is said at every start.
    ...(config.egressAllowWide ? [`warning: ${wideEgressWarning(config)}`] : []),
    // decision D33: clients meet the limit by default, so say it and how to change it.
    config.rateLimit === false
      ? `rate limit: off (RATE_LIMIT=off); RATE_LIMIT or --rate-limit sets requests a second per token (HCP Terraform's figure: ${RATE_LIMIT_DEFAULT})`
      : `rate limit: ${config.rateLimit} requests a second per token, beyond it 429 with Retry-After (RATE_LIMIT or --rate-limit changes it, "off" for none)`,
    // Exactly what this start revoked, so the line is true whatever the last one set.
    (fromEnv ? "owners token: using ADMIN_TOKEN" : `owners token (printed once, revoked at next start): ${token}`) +
      (revoked.length ? ` (${describeRevoked(revoked)})` : ""),
    "",
    "try (the demo run answers with its run_id; put it in place of RUN_ID; a message containing \"fail\" fails the mandatory check, and so does \"destroy\": its plan deletes a resource):",
    // The token came from this process's environment, which the shell the lines are pasted into
    // may not have: say so, and never print the secret here.
    ...(fromEnv ? ["  # the lines read $ADMIN_TOKEN: first, in the shell you paste them into, export ADMIN_TOKEN=<the ADMIN_TOKEN this server was started with>"] : []),
    `  curl -s ${auth} -H "Content-Type: application/vnd.api+json" -X POST ${api}/workspaces/${DEMO.workspace}/vars -d '{"data":{"type":"vars","attributes":{"key":"region","value":"eu-west-1","category":"env"}}}'`,
    `  curl -s ${auth} -H "Content-Type: application/json" -X POST ${origin}/demo/runs -d '{"message":"hello"}'`,
    `  curl -s ${auth} ${api}/runs/RUN_ID/task-stages`,
    "",
  ].join("\n"),
);
