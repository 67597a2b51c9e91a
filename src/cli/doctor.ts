import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { lookup } from "node:dns/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { externalIntegration, INTEGRATION_HOST } from "../../examples/server/integration.js";
import { createKeyring, type KeyringOptions } from "../crypto/keyring.js";
import { createEgressPolicy } from "../delivery/egress.js";
import { dataDirOf, parse } from "./args.js";
import { pendingOf } from "./doctor-storage.js";

/** One check's verdict: what to fix, or a note for its ok line. */
type Verdict = { fix: string } | { note: string };
type Check = (env: NodeJS.ProcessEnv) => Promise<Verdict>;

const ok = (note: string): Verdict => ({ note });
const fail = (fix: string): Verdict => ({ fix });

/**
 * `runplane doctor`: checks what `runplane serve` would use, with the same flags and environment,
 * without changing anything, and prints one line per check: `ok <check>: ...` or
 * `FAIL <check>: <what to fix>`. Exits non-zero when a check fails.
 */
export async function doctor(args: string[], out: (line: string) => void): Promise<boolean> {
  const { env } = parse(args);
  let healthy = true;
  for (const [name, check] of Object.entries(CHECKS)) {
    let verdict: Verdict;
    try {
      verdict = await check(env);
    } catch (error) {
      verdict = fail(error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error));
    }
    if ("fix" in verdict) healthy = false;
    out("fix" in verdict ? `FAIL ${name}: ${verdict.fix}` : `ok   ${name}: ${verdict.note}`);
  }
  return healthy;
}

const CHECKS: Record<string, Check> = { options, "data directory": dataDirectory, keyring, storage: pendingOf, port, egress };

async function options(env: NodeJS.ProcessEnv): Promise<Verdict> {
  const problems: string[] = [];
  const portOk = (name: string, fallback: string): void => {
    const value = Number(env[name] || fallback);
    if (!(Number.isSafeInteger(value) && value >= 0 && value <= 65_535)) problems.push(`${name} must be a port number from 0 to 65535`);
  };
  portOk("PORT", "8080");
  portOk("INTEGRATION_PORT", "8081");
  if (env.RUNPLANE_DIALECT && !["hcp-terraform", "default"].includes(env.RUNPLANE_DIALECT)) problems.push("RUNPLANE_DIALECT must be hcp-terraform or default");
  const pool = env.DATABASE_POOL_SIZE;
  if (pool && !(Number.isSafeInteger(Number(pool)) && Number(pool) >= 2)) problems.push("DATABASE_POOL_SIZE must be an integer >= 2");
  for (const name of ["PUBLIC_URL", "INTEGRATION_URL"]) {
    const value = env[name];
    if (value && !/^https?:\/\/[^/]/.test(value)) problems.push(`${name} must be an http(s) URL`);
  }
  const url = env.DATABASE_URL?.trim();
  if (url && !/^postgres(ql)?:\/\//.test(url)) problems.push("DATABASE_URL must be a postgres:// or postgresql:// URL");
  return problems.length ? fail(problems.join("; ")) : ok("flags and environment are valid");
}

async function dataDirectory(env: NodeJS.ProcessEnv): Promise<Verdict> {
  const dir = dataDirOf(env);
  if (!existsSync(dir)) return ok(`${dir} does not exist yet (the first start creates it, mode 0700)`);
  if (!statSync(dir).isDirectory()) return fail(`${dir} is not a directory: point --data-dir elsewhere`);
  const loose = readdirSync(dir).filter((name) => statSync(join(dir, name)).isFile() && (statSync(join(dir, name)).mode & 0o077) !== 0);
  const lock = join(dir, "server.lock");
  const owner = existsSync(lock) ? readFileSync(lock, "utf8").trim() : null;
  const notes = [(statSync(dir).mode & 0o077) !== 0 || loose.length ? "looser than 0700/0600 (the next start tightens it)" : "private (0700/0600)"];
  if (owner) notes.push(`lock held by pid ${owner}`);
  return ok(`${dir}, ${notes.join(", ")}`);
}

async function keyring(env: NodeJS.ProcessEnv): Promise<Verdict> {
  const fromEnv = env.RUNPLANE_KEYRING?.trim();
  const file = join(dataDirOf(env), "keyring.json");
  const source = fromEnv ? "RUNPLANE_KEYRING" : file;
  if (!fromEnv && !existsSync(file)) return ok("no keyring yet (the first start creates one)");
  const fix = `fix ${source} (\`runplane keygen --json\` prints a valid one)`;
  let parsed: KeyringOptions;
  try {
    parsed = JSON.parse(fromEnv || readFileSync(file, "utf8")) as KeyringOptions;
  } catch {
    return fail(`${source} is not JSON: ${fix}`);
  }
  try {
    const ring = createKeyring({ keys: Array.isArray(parsed?.keys) ? parsed.keys : [], ...(parsed?.active ? { active: parsed.active } : {}) });
    return ok(`${source}, ${parsed.keys.length} key(s), active ${ring.activeKeyId}`);
  } catch (error) {
    const message = error instanceof Error && error.name !== "ZodError" ? error.message : "key ids are 1-64 of [A-Za-z0-9_-]";
    return fail(`${message}: ${fix}`);
  }
}

async function port(env: NodeJS.ProcessEnv): Promise<Verdict> {
  const host = env.HOST || "127.0.0.1";
  const wanted = Number(env.PORT || 8080);
  if (wanted === 0) return ok("PORT 0: an ephemeral port");
  const free = await new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(wanted, host, () => server.close(() => resolve(true)));
  });
  return free ? ok(`${host}:${wanted} is free`) : fail(`port ${wanted} on ${host} is taken by another process: stop it, or choose another --port`);
}

/**
 * The demo tasks' integration must pass the egress policy the server sets up for it (D15): the
 * bundled one (127.0.0.1 on INTEGRATION_PORT) always does; INTEGRATION_URL must resolve to
 * addresses its allowlist entry admits.
 */
async function egress(env: NodeJS.ProcessEnv): Promise<Verdict> {
  if (!env.INTEGRATION_URL) return ok(`only the bundled integration on ${INTEGRATION_HOST} is reachable among private addresses`);
  const integration = externalIntegration(env.INTEGRATION_URL);
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
  return ok(`runplane may reach the integration at ${integration.url}; other private addresses stay refused`);
}
