import { serve } from "@hono/node-server";
import Database from "better-sqlite3";
import express from "express";
import { Hono } from "hono";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { toNodeListener } from "../../src/node.js";

/**
 * One bench server process. Modes: `<framework>-<what>` where framework is hono|express and what is
 * runplane-sqlite | runplane-memory | runplane-postgres | fixed (the same bytes as the runplane list,
 * from a bare route). `postgres` stores in DATABASE_URL, schema BENCH_PG_SCHEMA (created here; the
 * bench drops it). `BENCH_AUDIT=off` leaves the audit trail out. Prints `READY {"url", "token", ...}` once listening on an ephemeral loopback port.
 */
const mode = process.argv[2] ?? "hono-runplane-sqlite";
const [framework, what, adapter] = mode.split("-");

const stored =
  adapter === "memory"
    ? createMemoryStorage()
    : adapter === "postgres"
      ? await createPostgresStorage(process.env.DATABASE_URL ?? "", { schema: process.env.BENCH_PG_SCHEMA ?? "public" })
      : createSqliteStorage(new Database(join(mkdtempSync(join(tmpdir(), "rp-bench-")), "bench.db")));
// decision D53: BENCH_AUDIT=off serves the same storage without its audit store (nothing recorded),
// the baseline the "HTTP write, audit trail" rows compare against.
const storage = process.env.BENCH_AUDIT === "off" ? { ...stored, audit: undefined } : stored;
const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k", key: generateKey() }] } });
const d = runplane.directory;
await d.organizations.create({ name: "bench" });
await d.projects.create({ id: "prj-bench", name: "p", organization: "bench" });
await d.workspaces.create({ id: "ws-bench", name: "bench-ws", organization: "bench", projectId: "prj-bench" });
await d.teams.create({ id: "team-owners", name: "owners", organization: "bench" });
const { token } = await d.createApiToken({ organization: "bench", kind: "team", teamId: "team-owners" });
for (let i = 0; i < 20; i++) {
  await runplane.variables.create("ws-bench", { key: `key_${i}`, value: `value-${i}-${"x".repeat(24)}`, category: i % 2 ? "env" : "config" });
}
const listPath = "/api/v2/workspaces/ws-bench/vars";
const fixed = await (await runplane.handler(new Request(`http://127.0.0.1${listPath}`, { headers: { authorization: `Bearer ${token}` } }))).text();

let server: Server;
if (framework === "hono") {
  const app = new Hono();
  if (what === "fixed") app.get(listPath, (c) => c.body(fixed, 200, { "content-type": "application/vnd.api+json" }));
  else app.all("/api/v2/*", (c) => runplane.handler(c.req.raw));
  server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
} else {
  const app = express();
  if (what === "fixed") app.get(listPath, (_req, res) => void res.type("application/vnd.api+json").send(fixed));
  else app.use(toNodeListener(runplane.handler));
  server = createServer(app).listen(0, "127.0.0.1");
}
server.once("listening", () => {
  const address = server.address() as { port: number };
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${address.port}`, token, listPath, bodyBytes: String(fixed.length) })}\n`);
});
process.on("SIGTERM", () => {
  server.close();
  void runplane.close().then(() => process.exit(0));
});
