import { lookup } from "node:dns/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { settingName } from "../../src/cli/args.js";
import { createEgressPolicy } from "../../src/delivery/egress.js";
import { dataDirectory, readOnlyReason } from "./check-data-dir.js";
import { DatabaseUnreachableError, inspectDatabase } from "./check-storage.js";
import { keyringCheck } from "./check-keyring.js";
import { keysCheck } from "./check-keys.js";
import { hostsCheck } from "./check-hosts.js";
import { agentsCheck } from "./check-agents.js";
import { portTaken, readServerConfig, wideEgressWarning, type Problem, type ServerConfig } from "./config.js";
import { externalIntegration, INTEGRATION_HOST } from "./integration.js";
import { lockOwner, lockPorts } from "./lock.js";
import type { CheckInput, ServerCheck, Verdict } from "./check-types.js";

export type { CheckInput, ServerCheck, Verdict } from "./check-types.js";

const ok = (note: string): Verdict => ({ note });
const fail = (fix: string): Verdict => ({ fix });
const wrong = (input: CheckInput, ...variables: Problem["variable"][]): string | undefined =>
  variables.find((v) => input.problems.some((p) => p.variable === v));
const skipFor = (variable: string): Verdict => ({ skip: `not checked: ${settingName(variable)} is not valid (see options)` });

/**
 * Everything `runplane serve` checks before it starts anything, and `runplane doctor` prints:
 * one list, so the two cannot disagree about a setup.
 */
export const SERVER_CHECKS: readonly ServerCheck[] = [
  { name: "options", run: async ({ problems }) => (problems.length ? fail(problems.map((p) => p.message).join("; ")) : ok("flags and environment are valid")) },
  { name: "data directory", run: dataDirectory },
  { name: "keyring", run: keyringCheck },
  { name: "keys", run: keysCheck },
  { name: "storage", run: storage },
  { name: "hosts", run: hostsCheck },
  { name: "port", run: ports },
  { name: "egress", run: egress },
  // decision D34: the agent pools, their agents and the deliveries waiting for them.
  { name: "agents", run: agentsCheck },
];

/**
 * Runs every check in order; a check that throws is a failure with its message's first line. A
 * PostgreSQL that cannot be reached fails the first check that reads it; the later ones say they
 * were not checked, so the reason is given once (each attempt may word it differently).
 */
export async function runChecks(env: NodeJS.ProcessEnv): Promise<{ name: string; verdict: Verdict }[]> {
  const input: CheckInput = { env, ...readServerConfig(env) };
  const results: { name: string; verdict: Verdict }[] = [];
  let unreachable: string | null = null;
  for (const check of SERVER_CHECKS) {
    let verdict: Verdict;
    try {
      verdict = await check.run(input);
    } catch (error) {
      if (error instanceof DatabaseUnreachableError && unreachable !== null) verdict = { skip: `not checked: PostgreSQL cannot be reached (see ${unreachable})` };
      else verdict = fail(error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error));
      if (error instanceof DatabaseUnreachableError) unreachable ??= check.name;
    }
    results.push({ name: check.name, verdict });
  }
  return results;
}

/** `serve`'s first step: every check, then the settings; throws one line naming each failure. */
export async function preflight(env: NodeJS.ProcessEnv): Promise<ServerConfig> {
  const failures = (await runChecks(env)).flatMap(({ verdict }) => ("fix" in verdict ? [verdict.fix] : []));
  // Two checks failing for one cause (an unreadable SQLite file) say it once.
  if (failures.length) throw new Error([...new Set(failures)].join("; "));
  return readServerConfig(env).config;
}

async function storage(input: CheckInput): Promise<Verdict> {
  const invalid = wrong(input, "DATABASE_URL", "DATABASE_SCHEMA");
  if (invalid) return skipFor(invalid);
  // SQLite cannot even read a WAL file in a read-only directory: the data directory check names it.
  if (!input.config.databaseUrl && readOnlyReason(input.config.dataDir)) return { skip: "not checked: the data directory is read-only (see data directory)" };
  const note = await inspectDatabase(input.config, async ({ where, pending }) => {
    const state = pending.length ? `${pending.length} migration(s) pending (\`runplane migrate\` or the next start applies them)` : "schema up to date";
    return `${where}, ${state}`;
  });
  return ok(note ?? `SQLite file ${join(input.config.dataDir, "runplane.db")} does not exist yet (the first start creates it)`);
}

/** Whether nothing listens on `host:port` yet (binds it for a moment). */
const isFree = (port: number, host: string): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });

async function ports(input: CheckInput): Promise<Verdict> {
  const { config } = input;
  const invalid = wrong(input, "PORT", "INTEGRATION_PORT");
  if (invalid) return skipFor(invalid);
  // Doctor beside the running server without PORT (or INTEGRATION_PORT) checks the ports that
  // server recorded in its lock, not the defaults it may not use.
  const recorded = lockPorts(config.dataDir);
  const fromLock = (variable: "PORT" | "INTEGRATION_PORT", configured: number): [number, boolean] => {
    const port = variable === "PORT" ? recorded?.port : recorded?.integrationPort;
    return input.env[variable] === undefined && port !== undefined ? [port, true] : [configured, false];
  };
  const wanted: ["PORT" | "INTEGRATION_PORT", number, string][] = [["PORT", config.port, config.host]];
  // The bundled integration runs only without INTEGRATION_URL.
  if (!config.integrationUrl) wanted.push(["INTEGRATION_PORT", config.integrationPort, INTEGRATION_HOST]);
  const notes: string[] = [];
  // Doctor beside the running server finds its ports taken by that server, which is no fault
  // (serve itself is then stopped by the data directory's lock, naming the pid).
  const running = lockOwner(config.dataDir);
  for (const [variable, configured, host] of wanted) {
    const [port, locked] = fromLock(variable, configured);
    const source = locked ? "; its port from server.lock" : "";
    if (port === 0) notes.push(`${variable} 0: an ephemeral port`);
    else if (await isFree(port, host)) notes.push(`${host}:${port} is free (${variable})`);
    else if (running !== null) notes.push(`${host}:${port} is taken, by the runplane server running on this data directory (pid ${running}${source}) (${variable})`);
    else return fail(portTaken(variable, port, host));
  }
  return ok(notes.join(", "));
}

/**
 * What the server may reach among private addresses (D15): the bundled integration (127.0.0.1 on
 * INTEGRATION_PORT) or INTEGRATION_URL, whose name must resolve to addresses its entry admits,
 * and the EGRESS_ALLOW entries. A setup that works with EGRESS_ALLOW_WIDE on is a warning (D38).
 */
async function egress(input: CheckInput): Promise<Verdict> {
  const invalid = wrong(input, "INTEGRATION_URL", "EGRESS_ALLOW", "EGRESS_ALLOW_WIDE");
  if (invalid) return skipFor(invalid);
  const verdict = await reachable(input);
  const warning = wideEgressWarning(input.config);
  return warning !== null && "note" in verdict ? { warn: `${verdict.note}. ${warning}` } : verdict;
}

async function reachable(input: CheckInput): Promise<Verdict> {
  const { config } = input;
  const extra = config.egressAllow.length ? ` and EGRESS_ALLOW ${config.egressAllow.join(", ")}` : "";
  if (!config.integrationUrl) return ok(`runplane may reach the bundled integration on ${INTEGRATION_HOST}${extra}; other private addresses stay refused`);
  const integration = externalIntegration(config.integrationUrl);
  const policy = createEgressPolicy({ allow: [integration.allow] });
  const url = policy.checkUrl(integration.url);
  if (!url.ok) return fail(`the integration URL ${integration.url} is refused (${url.reason}): fix INTEGRATION_URL`);
  let addresses: { address: string }[];
  try {
    addresses = await lookup(url.hostname, { all: true });
  } catch {
    return fail(`${url.hostname} does not resolve: fix INTEGRATION_URL or the DNS`);
  }
  const refused = addresses.find((a) => !policy.checkAddress(a.address, url.hostname, url.port).ok);
  if (refused) return fail(`${url.hostname} resolves to ${refused.address}, which the egress policy refuses: fix INTEGRATION_URL`);
  return ok(`runplane may reach the integration at ${integration.url}${extra}; other private addresses stay refused`);
}
