import { Hono } from "hono";
import { openSqliteStorage } from "../../adapters/sqlite/index.js";
import { createConsoleLogger, createDispatcher, createResultsPage, createRunplane, type Runplane } from "../../src/index.js";
import { DEMO, seedDemo } from "./demo.js";
import { createDemoRuns } from "./demo-runs.js";
import { ensureDemoTasks, listen, startIntegration } from "./integration.js";
import { openDataDir } from "./state.js";

/**
 * The reference server: runplane mounted in Hono over an embedded SQLite file, with demo records,
 * the outbox dispatcher, and the bundled example run task integration on the loopback address.
 * Environment: PORT (8080), HOST (127.0.0.1), DATA_DIR (./data), ADMIN_TOKEN (optional owners token),
 * RUNPLANE_DIALECT (`hcp-terraform` for real-client category words and signature header),
 * INTEGRATION_PORT (8081; the example integration, always on 127.0.0.1), PUBLIC_URL (default: the
 * bound address; integrations call back there).
 */
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? "127.0.0.1";
const integrationPort = Number(process.env.INTEGRATION_PORT ?? 8081);
const dataDir = openDataDir(process.env.DATA_DIR ?? "./data");
const dialect = process.env.RUNPLANE_DIALECT === "hcp-terraform" ? "hcp-terraform" : "default";

// Bind first: runplane's publicUrl (callback URLs) needs the real port when PORT=0. Requests that
// arrive before the app is ready get 503.
let app: Hono | null = null;
const http = await listen((request) => (app ? app.fetch(request) : new Response("starting\n", { status: 503 })), port, host);
const origin = process.env.PUBLIC_URL?.replace(/\/+$/, "") ?? `http://${host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host}:${http.port}`;

// The integration listens before the demo tasks are saved: saving sends it the verification request.
const hmacKey = dataDir.integrationHmacKey();
const integration = await startIntegration({ hmacKey, port: integrationPort });

const storage = await openSqliteStorage(dataDir.database);
const runplane: Runplane = createRunplane({
  storage,
  keyring: dataDir.keyring(),
  dialect,
  logger: createConsoleLogger(),
  publicUrl: origin,
  // decision D15: private addresses stay refused, except the bundled integration's loopback address.
  egress: { allow: [integration.allow] },
});
await seedDemo(runplane);
await ensureDemoTasks(runplane, { url: integration.url, hmacKey });
const dispatcher = createDispatcher(runplane, { pollIntervalMs: 250 });
dispatcher.start();

/**
 * Uses ADMIN_TOKEN when set, otherwise issues a fresh owners token. The token of the previous start is
 * revoked when it differs, so exactly one server-issued owners token is valid at a time.
 */
async function ownersToken(): Promise<{ token: string; fromEnv: boolean }> {
  const fromEnv = process.env.ADMIN_TOKEN;
  const owners = { organization: DEMO.organization, kind: "team", teamId: DEMO.ownersTeam } as const;
  let issued: { id: string; token: string };
  if (fromEnv) {
    const existing = await runplane.directory.findApiToken(fromEnv);
    issued = existing
      ? { id: existing.id, token: fromEnv }
      : await runplane.directory.createApiToken({ ...owners, secret: fromEnv, description: "ADMIN_TOKEN" });
  } else {
    issued = await runplane.directory.createApiToken({ ...owners, description: "reference server" });
  }
  const previous = dataDir.lastTokenId();
  if (previous && previous !== issued.id) await runplane.directory.revokeApiToken(previous);
  dataDir.rememberTokenId(issued.id);
  return { token: issued.token, fromEnv: Boolean(fromEnv) };
}
const { token, fromEnv } = await ownersToken();

const demoRuns = createDemoRuns(runplane, { publicUrl: origin });
const routes = new Hono();
routes.all("/api/v2/*", (c) => runplane.handler(c.req.raw));
routes.all("/api/v2", (c) => runplane.handler(c.req.raw));
routes.get("/", (c) => c.text("runplane reference server: the API is under /api/v2\n"));
// The run task results page for people, signed in with an API token (or a bearer header).
const resultsPage = createResultsPage(runplane, { prefix: "/app" });
routes.all("/app/*", (c) => resultsPage(c.req.raw));
routes.all("/app", (c) => resultsPage(c.req.raw));
// Example only, outside the API: walks a demo run through its task stages (examples/server/demo-runs.ts).
routes.all("/demo/runs", (c) => demoRuns.handler(c.req.raw));
app = routes;

const api = `${origin}/api/v2`;
const auth = fromEnv ? '-H "Authorization: Bearer $ADMIN_TOKEN"' : `-H "Authorization: Bearer ${token}"`;
process.stdout.write(
  [
    `runplane listening on ${api}`,
    `results page: ${origin}/app/runs/<run id>`,
    `example integration: ${integration.url} (run tasks task-demo, mandatory at post_plan, and task-demo-advisory, advisory at pre_apply, on ${DEMO.workspace})`,
    fromEnv ? "owners token: using ADMIN_TOKEN" : `owners token (printed once, revoked at next start): ${token}`,
    "",
    "try (the demo run answers with its run_id; put it in place of RUN_ID; a message containing \"fail\" fails the mandatory check):",
    `  curl -s ${auth} -H "Content-Type: application/vnd.api+json" -X POST ${api}/workspaces/${DEMO.workspace}/vars -d '{"data":{"type":"vars","attributes":{"key":"region","value":"eu-west-1","category":"env"}}}'`,
    `  curl -s ${auth} -H "Content-Type: application/json" -X POST ${origin}/demo/runs -d '{"message":"hello"}'`,
    `  curl -s ${auth} ${api}/runs/RUN_ID/task-stages`,
    "",
  ].join("\n"),
);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`received ${signal}, shutting down\n`);
  let code = 0;
  try {
    const closed = http.close();
    demoRuns.close();
    await dispatcher.stop({ graceMs: 5_000 });
    await integration.close();
    await closed;
    await runplane.close();
  } catch (error) {
    process.stderr.write(`shutdown failed: ${error instanceof Error ? error.name : typeof error}\n`);
    code = 1;
  }
  process.exit(code);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
