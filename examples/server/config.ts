import { schemaPrefix } from "../../adapters/postgres/schema.js";
import { settingName, type ServerVariable } from "../../src/cli/args.js";
import { allowEntryProblem } from "../../src/delivery/address-policy.js";
import { DEFAULT_MIN_PREFIX, WIDE_ADVICE, wideEntryProblem } from "../../src/delivery/wide-entries.js";
import { portlessLoopback, shownEntries, wideTogether } from "../../src/delivery/wide-allowlist.js";
import type { LogLevel } from "../../src/index.js";
import { DIALECTS, type Dialect } from "../../src/schemas/common.js";
import { API_TOKEN_SECRET_MIN_LENGTH } from "../../src/services/directory.js";
import { isHttpUrl } from "../../src/services/run-task-settings.js";
import { RATE_LIMIT_DEFAULTS } from "../../src/http/rate-limit.js";
import { DEFAULT_LOG_URL_LIFETIME_MS } from "../../src/services/log-capabilities.js";
import { durationMs } from "../../src/services/run-task-settings.js";

export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];
/** decision D33: HCP Terraform's documented figure, requests per second per credential. */
export const RATE_LIMIT_DEFAULT = RATE_LIMIT_DEFAULTS.requestsPerSecond;

/** The reference server's settings, read from its environment (the CLI's flags land there first). */
export interface ServerConfig {
  port: number;
  host: string;
  integrationPort: number;
  dataDir: string;
  adminToken: string | undefined;
  dialect: Dialect;
  logLevel: LogLevel;
  publicUrl: string | undefined;
  integrationUrl: string | undefined;
  databaseUrl: string | undefined;
  databaseSchema: string;
  poolSize: number | undefined;
  /** EGRESS_ALLOW: allowlist entries besides the integration's own (decision D15). */
  egressAllow: string[];
  /** EGRESS_ALLOW_WIDE: wide EGRESS_ALLOW entries are accepted, and warned about (decision D38). */
  egressAllowWide: boolean;
  /** EGRESS_EXCERPTS: what is kept of answers from destinations only EGRESS_ALLOW admits (decision D38). */
  egressExcerpts: "status" | "full";
  /** RATE_LIMIT: API requests per second per credential, or false for none (decision D33). */
  rateLimit: number | false;
  /** LOG_URL_LIFETIME: how long a `log-read-url` works, in ms (option `logUrls.lifetime`, decision D32). */
  logUrlLifetimeMs: number;
  /** METRICS_TOKEN: the bearer token `GET /metrics` requires; none by default. */
  metricsToken: string | undefined;
  /** TRUST_PROXY: proxies in front that append to X-Forwarded-For (option `trustProxy`, decision D62). */
  trustProxy: number;
}

/** One wrong setting: the variable and a line that names it (and its flag) and the accepted values. */
export interface Problem {
  variable: ServerVariable | "LOG_LEVEL";
  message: string;
}

/**
 * Reads every setting at once: a wrong one is a {@link Problem}, never a silent
 * default (`--dialect tfc`) or Node's own text (`NaN`). Values stay at their defaults where a
 * setting is wrong, so a caller may still look at the others. Secrets are never quoted.
 */
export function readServerConfig(env: NodeJS.ProcessEnv): { config: ServerConfig; problems: Problem[] } {
  const problems: Problem[] = [];
  const wrong = (variable: Problem["variable"], text: string, shown?: string): void =>
    void problems.push({ variable, message: `${settingName(variable)} ${text}${shown === undefined ? "" : `; got ${JSON.stringify(shown)}`}` });
  const value = (variable: Problem["variable"]): string | undefined => env[variable]?.trim() || undefined;

  const port = (variable: "PORT" | "INTEGRATION_PORT", fallback: number): number => {
    const text = value(variable);
    if (text === undefined) return fallback;
    if (/^\d{1,5}$/.test(text) && Number(text) <= 65_535) return Number(text);
    wrong(variable, "must be an integer from 0 to 65535 (0: any free port)", text);
    return fallback;
  };

  const dialectText = value("RUNPLANE_DIALECT");
  const dialect = dialectText === undefined ? "default" : DIALECTS.find((d) => d === dialectText);
  if (dialect === undefined) wrong("RUNPLANE_DIALECT", `must be ${DIALECTS.map((d) => JSON.stringify(d)).join(" or ")} ("hcp-terraform" for real Terraform clients and integrations)`, dialectText);

  const logLevelText = value("LOG_LEVEL");
  const logLevel = logLevelText === undefined ? "info" : LOG_LEVELS.find((l) => l === logLevelText);
  if (logLevel === undefined) wrong("LOG_LEVEL", `must be one of ${LOG_LEVELS.join(", ")}`, logLevelText);

  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < API_TOKEN_SECRET_MIN_LENGTH) {
    wrong("ADMIN_TOKEN", `must be at least ${API_TOKEN_SECRET_MIN_LENGTH} characters; it has ${adminToken.length} (\`openssl rand -base64 32\` makes a good one)`);
  }

  const url = (variable: "PUBLIC_URL" | "INTEGRATION_URL"): string | undefined => {
    const text = value(variable);
    if (text !== undefined && !isHttpUrl(text)) wrong(variable, "must be an absolute http(s) URL such as http://127.0.0.1:8081/run-task", text);
    return text !== undefined && isHttpUrl(text) ? text : undefined;
  };

  const { databaseUrl, databaseSchema, poolSize } = readDatabase(value, wrong);

  const { egressAllow, egressAllowWide, egressExcerpts } = readEgress(env, value, wrong);

  // decision D33: on by default at HCP Terraform's documented figure, so clients meet the real limit.
  const rateText = value("RATE_LIMIT");
  const rateLimit = rateText === undefined ? RATE_LIMIT_DEFAULT : rateText === "off" ? false : /^\d+(\.\d+)?$/.test(rateText) && Number(rateText) > 0 ? Number(rateText) : null;
  if (rateLimit === null) wrong("RATE_LIMIT", `must be a positive number of requests per second (default ${RATE_LIMIT_DEFAULT}, HCP Terraform's figure) or "off"`, rateText);

  // decision D32: the option's range; a unit is required, since a bare number could mean seconds or ms.
  const lifetimeText = value("LOG_URL_LIFETIME");
  const lifetimeMs = lifetimeText === undefined ? DEFAULT_LOG_URL_LIFETIME_MS : durationMs(lifetimeText);
  const logUrlLifetimeMs = lifetimeMs !== null && lifetimeMs >= 60_000 && lifetimeMs <= 86_400_000 ? lifetimeMs : null;
  if (logUrlLifetimeMs === null) wrong("LOG_URL_LIFETIME", 'must be a duration from 1 minute to 24 hours, such as "10m" or "1h" (default 1h)', lifetimeText);

  // Not quoted: a secret. A scrape sends it as `Authorization: Bearer <METRICS_TOKEN>`.
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < API_TOKEN_SECRET_MIN_LENGTH) {
    wrong("METRICS_TOKEN", `must be at least ${API_TOKEN_SECRET_MIN_LENGTH} characters; it has ${metricsToken.length}`);
  }

  // decision D62: forwarding headers count only with proxies the operator says are in front.
  const proxiesText = value("TRUST_PROXY");
  const trustProxy = proxiesText === undefined ? 0 : /^([0-9]|10)$/.test(proxiesText) ? Number(proxiesText) : null;
  if (trustProxy === null) wrong("TRUST_PROXY", "must be how many proxies in front append to X-Forwarded-For, 0 to 10 (default 0: the connection's own address)", proxiesText);

  const config: ServerConfig = {
    port: port("PORT", 8080),
    host: value("HOST") ?? "127.0.0.1",
    integrationPort: port("INTEGRATION_PORT", 8081),
    dataDir: value("DATA_DIR") ?? "./data",
    adminToken,
    dialect: dialect ?? "default",
    logLevel: logLevel ?? "info",
    publicUrl: url("PUBLIC_URL")?.replace(/\/+$/, ""),
    integrationUrl: url("INTEGRATION_URL"),
    databaseUrl,
    databaseSchema,
    poolSize: poolSize ?? undefined,
    egressAllow,
    egressAllowWide,
    egressExcerpts,
    rateLimit: rateLimit ?? RATE_LIMIT_DEFAULT,
    logUrlLifetimeMs: logUrlLifetimeMs ?? DEFAULT_LOG_URL_LIFETIME_MS,
    trustProxy: trustProxy ?? 0,
    metricsToken: metricsToken !== undefined && metricsToken.length >= API_TOKEN_SECRET_MIN_LENGTH ? metricsToken : undefined,
  };
  return { config, problems };
}

/**
 * EGRESS_ALLOW, EGRESS_ALLOW_WIDE and EGRESS_EXCERPTS (decisions D15, D38): a wrong entry, and a wide
 * one without the switch, is a problem; the valid entries are kept.
 */
function readEgress(
  env: NodeJS.ProcessEnv,
  value: (variable: Problem["variable"]) => string | undefined,
  wrong: (variable: Problem["variable"], text: string, shown?: string) => void,
): Pick<ServerConfig, "egressAllow" | "egressAllowWide" | "egressExcerpts"> {
  const wideText = value("EGRESS_ALLOW_WIDE");
  const egressAllowWide = wideText === undefined ? false : SWITCH[wideText.toLowerCase()];
  if (egressAllowWide === undefined) wrong("EGRESS_ALLOW_WIDE", 'must be 1 (accept wide EGRESS_ALLOW entries) or 0 (the default)', wideText);
  const egressAllow = (env.EGRESS_ALLOW ?? "").split(",").map((e) => e.trim()).filter((e) => e !== "");
  for (const entry of egressAllow) {
    const problem = allowEntryProblem(entry);
    if (problem) wrong("EGRESS_ALLOW", `entry ${JSON.stringify(entry)} ${problem}; entries are CIDRs, IP addresses or host names, each optionally with :port, separated by commas`);
    // decision D38: a wide entry is refused at start unless the operator says so.
    const wide = problem || egressAllowWide ? null : wideEntryProblem(entry);
    if (wide) wrong("EGRESS_ALLOW", `entry ${JSON.stringify(entry)} is wide: it ${wide}; ${WIDE_ADVICE} (${WIDE_BOUND}), ${ACCEPT_IT}`);
    // decision D43: so is loopback without a port.
    else if (!problem && !egressAllowWide && portlessLoopback(entry)) {
      wrong("EGRESS_ALLOW", `entry ${JSON.stringify(entry)} is wide: it ${LOOPBACK_WIDE}; give the port (${withPort(entry)}), ${ACCEPT_IT}`);
    }
  }
  // decision D43: and entries that are wide only together.
  for (const { entries, problem } of egressAllowWide ? [] : wideTogether(egressAllow.filter((e) => allowEntryProblem(e) === null))) {
    wrong("EGRESS_ALLOW", `entries ${shownEntries(entries)} are wide together: they ${problem}; ${WIDE_ADVICE} (${WIDE_BOUND}), ${ACCEPT_IT}`);
  }
  const excerptsText = value("EGRESS_EXCERPTS");
  const egressExcerpts = excerptsText === undefined ? "status" : excerptsText === "status" || excerptsText === "full" ? excerptsText : null;
  if (egressExcerpts === null) wrong("EGRESS_EXCERPTS", 'must be "status" (the default: keep only the status line of answers from destinations EGRESS_ALLOW admits) or "full"', excerptsText);

  return {
    egressAllow: egressAllow.filter((e) => allowEntryProblem(e) === null),
    egressAllowWide: egressAllowWide ?? false,
    egressExcerpts: egressExcerpts ?? "status",
  };
}

const ACCEPT_IT = `or set ${settingName("EGRESS_ALLOW_WIDE")} to 1 to accept it knowingly`;
const LOOPBACK_WIDE = "admits every port of the loopback address, this server's own API and its database among them";
/** The entry with a port, as an example of the fix (`[::1]:8081`). */
const withPort = (entry: string): string => `${entry.includes(":") && !entry.startsWith("[") ? `[${entry}]` : entry.replace(/\/\d+$/, "")}:8081`;

/** Values of an on/off variable such as EGRESS_ALLOW_WIDE. */
const SWITCH: Record<string, boolean | undefined> = { "1": true, true: true, yes: true, on: true, "0": false, false: false, no: false, off: false };
const WIDE_BOUND = `no wider than a /${DEFAULT_MIN_PREFIX.ipv4} of an IPv4 private range or a /${DEFAULT_MIN_PREFIX.ipv6} of fc00::/7`;

/**
 * decision D38: what the banner and `doctor` say when EGRESS_ALLOW_WIDE is on, naming the wide
 * entries; null when it is off.
 */
export function wideEgressWarning(config: Pick<ServerConfig, "egressAllow" | "egressAllowWide">): string | null {
  if (!config.egressAllowWide) return null;
  const wide = config.egressAllow.flatMap((entry) => {
    const problem = wideEntryProblem(entry) ?? (portlessLoopback(entry) ? LOOPBACK_WIDE : null);
    return problem ? [`${entry} (${problem})`] : [];
  });
  for (const { entries, problem } of wideTogether(config.egressAllow)) wide.push(`${shownEntries(entries)} (${problem})`);
  if (wide.length === 0) return `${settingName("EGRESS_ALLOW_WIDE")} is on, though no EGRESS_ALLOW entry is wide: turn it off`;
  return `${settingName("EGRESS_ALLOW_WIDE")} is on and EGRESS_ALLOW has wide entries: ${wide.join(", ")}; whoever may manage run tasks can send requests into those networks. Private integrations belong behind agents (decision D34, private run tasks through agents)`;
}

/** The message for a port `serve` cannot bind, whether its check or the bind itself finds it taken. */
export const portTaken = (variable: "PORT" | "INTEGRATION_PORT", port: number, host: string): string =>
  `${settingName(variable)}: port ${port} on ${host} is taken by another process: stop it, or choose another port (0: any free one)`;

function isSchemaName(name: string): boolean {
  try {
    schemaPrefix(name);
    return true;
  } catch {
    return false;
  }
}

/** DATABASE_URL, DATABASE_SCHEMA and DATABASE_POOL_SIZE, each checked (`null`: wrong, reported). */
function readDatabase(value: (variable: Problem["variable"]) => string | undefined, wrong: (variable: Problem["variable"], text: string, shown?: string) => void) {
  const databaseUrl = value("DATABASE_URL");
  // Not quoted: a database URL may hold a password.
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) wrong("DATABASE_URL", "must be a postgres:// or postgresql:// URL (leave it unset for the SQLite file in DATA_DIR)");
  const databaseSchema = value("DATABASE_SCHEMA") ?? "public";
  if (!isSchemaName(databaseSchema)) wrong("DATABASE_SCHEMA", "must be a lower-case identifier ([a-z_][a-z0-9_]*, at most 63 characters)", databaseSchema);
  const poolText = value("DATABASE_POOL_SIZE");
  const poolSize = poolText === undefined ? undefined : /^\d{1,6}$/.test(poolText) && Number(poolText) >= 2 ? Number(poolText) : null;
  // One connection holds the startup lock while the others seed (examples/server/storage.ts).
  if (poolSize === null) wrong("DATABASE_POOL_SIZE", "must be an integer of at least 2 (one connection holds the startup lock)", poolText);
  return { databaseUrl, databaseSchema, poolSize };
}
