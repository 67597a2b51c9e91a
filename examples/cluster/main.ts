import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readServerConfig } from "../server/config.js";
import { startIntegration } from "../server/integration.js";
import { openDataDir } from "../server/state.js";

/**
 * `npx tsx examples/cluster/main.ts --hosts 3 [--port 8080]`: several reference servers
 * (examples/server/main.ts) on one PostgreSQL database, on ports 8080, 8081, ... (`--port 0`:
 * ephemeral ports). They share one DATA_DIR (./data-cluster: the keyring and the demo HMAC key),
 * one ADMIN_TOKEN (generated and printed when unset) and one example integration, which this
 * process runs and every host points the demo tasks at (INTEGRATION_URL). Prints each host's URL;
 * Ctrl-C stops them all. Environment: DATABASE_URL (default the local
 * postgres://postgres@127.0.0.1:5432/postgres), DATABASE_SCHEMA, DATABASE_POOL_SIZE, DATA_DIR,
 * ADMIN_TOKEN, INTEGRATION_PORT (default ephemeral).
 */
/** One line on stderr and exit 2, before anything starts. */
function refuse(message: string): never {
  process.stderr.write(`examples/cluster: ${message}\n`);
  process.exit(2);
}

const { values } = parseArgs({
  options: { hosts: { type: "string", default: "2" }, port: { type: "string", default: "8080" } },
  strict: true,
});
const count = Number(values.hosts);
const basePort = Number(values.port);
if (!Number.isSafeInteger(count) || count < 1 || count > 32) refuse(`--hosts must be an integer from 1 to 32; got ${JSON.stringify(values.hosts)}`);
if (!/^\d+$/.test(values.port!) || basePort + count > 65_536) refuse(`--port must be a port number that leaves room for ${count} consecutive ports (0: ephemeral ports); got ${JSON.stringify(values.port)}`);

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const databaseUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
// The hosts' own settings, checked once here (each host checks them again): PORT and
// INTEGRATION_URL are this process's to set.
const { config, problems } = readServerConfig({ ...process.env, DATABASE_URL: databaseUrl, PORT: "0", INTEGRATION_URL: "" });
if (problems.length) refuse(problems.map((p) => p.message).join("; "));
const dataDirPath = resolve(process.env.DATA_DIR?.trim() || "./data-cluster");
const generatedToken = config.adminToken ? null : `cluster-${randomBytes(24).toString("base64url")}`;
const adminToken = config.adminToken ?? generatedToken!;

// Created here, before any host starts, so no two hosts race to create the shared secrets.
const dataDir = openDataDir(dataDirPath);
dataDir.keyring();
const integration = await startIntegration({ hmacKey: dataDir.integrationHmacKey(), port: process.env.INTEGRATION_PORT?.trim() ? config.integrationPort : 0 });

interface Host {
  index: number;
  child: ChildProcess;
  api: Promise<string>;
}

/** Starts host `index` (all at once: the hosts' startup lock is what keeps the seeding single). */
function startHost(index: number): Host {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/server/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDirPath,
      ADMIN_TOKEN: adminToken,
      INTEGRATION_URL: integration.url,
      PORT: String(basePort === 0 ? 0 : basePort + index),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const api = new Promise<string>((resolveApi, reject) => {
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        process.stdout.write(`[host ${index + 1}] ${line}\n`);
        const listening = /listening on (\S+)/.exec(line);
        if (listening) resolveApi(listening[1]!);
      });
    }
    child.once("exit", (code, signal) => reject(new Error(`host ${index + 1} exited (${signal ?? code}) before it was ready`)));
  });
  return { index, child, api };
}

const hosts = Array.from({ length: count }, (_, index) => startHost(index));

let stopping = false;
async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    const exits = hosts.map(
      ({ child }) =>
        new Promise<number | null>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode);
          child.once("exit", (exitCode) => done(exitCode));
          child.kill("SIGTERM");
        }),
    );
    const codes = await Promise.all(exits);
    await integration.close();
    process.exit(codes.every((c) => c === 0) ? code : 1);
  }
  return new Promise<never>(() => undefined);
}
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));

let apis: string[];
try {
  apis = await Promise.all(hosts.map((h) => h.api));
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  await stopAll(1);
}
for (const { child, index } of hosts) {
  child.once("exit", (code, signal) => {
    if (stopping) return;
    process.stderr.write(`host ${index + 1} exited (${signal ?? code}); stopping the others\n`);
    void stopAll(1);
  });
}

process.stdout.write(
  [
    "",
    `runplane cluster: ${count} hosts on ${new URL(databaseUrl).host}${new URL(databaseUrl).pathname}, schema ${process.env.DATABASE_SCHEMA ?? "public"}`,
    ...apis!.map((api, i) => `  host ${i + 1}: ${api}`),
    ...(config.publicUrl ? [`public URL (every host's callbacks and links): ${config.publicUrl}/api/v2`] : []),
    `example integration (shared): ${integration.url}`,
    `shared DATA_DIR: ${dataDirPath}`,
    generatedToken ? `ADMIN_TOKEN (generated, valid on every host): ${generatedToken}` : "ADMIN_TOKEN: from the environment, valid on every host",
    // The hosts' curl lines read $ADMIN_TOKEN, which the shell they are pasted into may not have.
    generatedToken
      ? `the hosts' curl lines read $ADMIN_TOKEN; first, in the shell you paste them into: export ADMIN_TOKEN=${generatedToken}`
      : "the hosts' curl lines read $ADMIN_TOKEN; first, in the shell you paste them into: export ADMIN_TOKEN=<the ADMIN_TOKEN the cluster was started with>",
    "Ctrl-C stops every host.",
    "",
  ].join("\n"),
);
