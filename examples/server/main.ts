import { serve } from "@hono/node-server";
import { Hono } from "hono";
import type { AddressInfo } from "node:net";
import { openSqliteStorage } from "../../adapters/sqlite/index.js";
import { createConsoleLogger, createResultsPage, createRunplane } from "../../src/index.js";
import { DEMO, seedDemo } from "./demo.js";
import { openDataDir } from "./state.js";

/**
 * The reference server: runplane mounted in Hono over an embedded SQLite file, with demo records.
 * Environment: PORT (8080), HOST (127.0.0.1), DATA_DIR (./data), ADMIN_TOKEN (optional owners token),
 * RUNPLANE_DIALECT (`hcp-terraform` for real-client category words and signature header).
 */
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? "127.0.0.1";
const dataDir = openDataDir(process.env.DATA_DIR ?? "./data");
const dialect = process.env.RUNPLANE_DIALECT === "hcp-terraform" ? "hcp-terraform" : "default";

const storage = await openSqliteStorage(dataDir.database);
const runplane = createRunplane({ storage, keyring: dataDir.keyring(), dialect, logger: createConsoleLogger() });
await seedDemo(runplane);

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

const app = new Hono();
app.all("/api/v2/*", (c) => runplane.handler(c.req.raw));
app.all("/api/v2", (c) => runplane.handler(c.req.raw));
app.get("/", (c) => c.text("runplane reference server: the API is under /api/v2\n"));
// The run task results page for people, signed in with an API token (or a bearer header).
const resultsPage = createResultsPage(runplane, { prefix: "/app" });
app.all("/app/*", (c) => resultsPage(c.req.raw));
app.all("/app", (c) => resultsPage(c.req.raw));

const server = serve({ fetch: app.fetch, port, hostname: host }, (info: AddressInfo) => {
  const api = `http://${host}:${info.port}/api/v2`;
  const auth = fromEnv ? '-H "Authorization: Bearer $ADMIN_TOKEN"' : `-H "Authorization: Bearer ${token}"`;
  const type = `-H "Content-Type: application/vnd.api+json"`;
  process.stdout.write(
    [
      `runplane listening on ${api}`,
      `results page: http://${host}:${info.port}/app/runs/<run id>`,
      fromEnv ? "owners token: using ADMIN_TOKEN" : `owners token (printed once, revoked at next start): ${token}`,
      "",
      "try:",
      `  curl -s ${auth} ${type} -X POST ${api}/workspaces/${DEMO.workspace}/vars -d '{"data":{"type":"vars","attributes":{"key":"region","value":"eu-west-1","category":"env"}}}'`,
      `  curl -s ${auth} ${api}/workspaces/${DEMO.workspace}/vars`,
      `  curl -s ${auth} ${type} -X POST ${api}/policy-sets/${DEMO.policySet}/parameters -d '{"data":{"type":"vars","attributes":{"key":"max_cost","value":"100","category":"policy-set"}}}'`,
      "",
    ].join("\n"),
  );
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`received ${signal}, shutting down\n`);
  server.close();
  await runplane.close();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
