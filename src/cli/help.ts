import { AGENT_FLAGS } from "./agent.js";
import { DATA_FLAGS, DATABASE_FLAGS, SERVER_FLAGS, type ServerFlag } from "./args.js";

/** What each server flag takes; typed by SERVER_FLAGS, so a new flag cannot go undocumented. */
const SERVER_FLAG_HELP: Record<keyof typeof SERVER_FLAGS, string> = {
  port: "port to listen on, 0-65535 (default 8080; 0: any free port)",
  host: "address to listen on (default 127.0.0.1)",
  "data-dir": "folder of the SQLite file, keyring and secrets (default ./data)",
  "admin-token": "owners token to accept, at least 16 characters (default: a new one printed at each start)",
  dialect: "default or hcp-terraform (real Terraform clients and integrations)",
  "public-url": "http(s) origin integrations call back to (default: the bound address)",
  "integration-port": "port of the bundled example integration on 127.0.0.1, 0-65535 (default 8081)",
  "integration-url": "http(s) URL of an integration this host does not start (the demo tasks use it)",
  "integration-hmac-key": "HMAC key of the demo tasks (default: generated in the data directory)",
  keyring: "the keyring as JSON, instead of keyring.json in the data directory",
  "database-url": "postgres:// URL (default: the SQLite file in the data directory)",
  "database-schema": "PostgreSQL schema, a lower-case identifier (default public)",
  "database-pool-size": "PostgreSQL connections of this host, an integer of at least 2 (default 10)",
  "egress-allow": "more private destinations run tasks may use, comma-separated: CIDRs, IP addresses or host names, each optionally with :port",
  "egress-allow-wide": "1: accept wide EGRESS_ALLOW entries (a whole private range, more than a /16 of one, link-local, a metadata address); doctor and the banner warn",
  "egress-excerpts": "status (default): keep only the status line of answers from destinations EGRESS_ALLOW admits; full: keep them whole",
  "rate-limit": "API requests per second per credential (default 30, HCP Terraform's figure; off: no limit)",
  "log-url-lifetime": "how long a plan's or apply's log-read-url works, 1m to 24h such as 10m or 1h (default 1h)",
  "metrics-token": "bearer token GET /metrics requires, at least 16 characters (default: none, /metrics answers whoever reaches HOST:PORT)",
  "trust-proxy": "proxies in front that append to X-Forwarded-For, 0 to 10 (default 0: the client address is the connection's own)",
};

/**
 * `runplane --help` and `runplane <command> --help`: what each command does and every
 * flag it takes, and only those. The server flags are listed from SERVER_FLAGS, so a
 * new one cannot be left out.
 */
const flagsNote = (flags: readonly ServerFlag[], title: string): string =>
  `${title} (each wins over its environment variable):\n` +
  flags.map((flag) => `  --${flag.padEnd(22)} ${SERVER_FLAGS[flag].padEnd(21)} ${SERVER_FLAG_HELP[flag]}`).join("\n");

/** A subcommand's own flags, listed like the server flags. */
const ownFlags = (flags: readonly (readonly [string, string, string])[]): string =>
  `flags:\n${flags.map(([flag, value, what]) => `  --${flag.padEnd(22)} ${value.padEnd(21)} ${what}\n`).join("")}`;
const TEAM_FLAG = ["team", "<id>", "the team (default: the owners team, which acts as owners)"] as const;
const ORGANIZATION_FLAG = ["organization", "<name>", "the organization (default: demo)"] as const;

const SERVER_NOTE = flagsNote(Object.keys(SERVER_FLAGS) as ServerFlag[], "server flags");
const DATABASE_NOTE = flagsNote(DATABASE_FLAGS, "database flags");
const DATA_NOTE = flagsNote(DATA_FLAGS, "data flags");

export const COMMAND_HELP: Record<string, string> = {
  serve: `usage: runplane serve [server flags]\nthe reference server: the API under /api/v2, the results page, the demo and its example integration\n${SERVER_NOTE}`,
  keygen: "usage: runplane keygen [--json] [--id <key id>]\na new 32-byte keyring key, base64 (--id: as the keyring entry {\"id\",\"key\"} to add to keys; --json: a whole keyring with that key active)",
  migrate: `usage: runplane migrate [--dry-run] [database flags]\napply pending schema migrations to the server's database (--dry-run: list them, apply nothing)\n${DATABASE_NOTE}`,
  reencrypt: `usage: runplane reencrypt [--retire <key id>] [data flags]\nmove every sealed value to the keyring's active key (in an existing data directory or database) and print what each key seals\n--retire <key id>: then remove that key from keyring.json, refused while it is active or still seals a value\n${DATA_NOTE}`,
  audit: `usage: runplane audit verify [--organization <name> [--expect-head <digest>]] [data flags]\nwalk each organization's audit hash chain in the server's data and name the first break (an edited or deleted event); prints each chain's head digest, to keep where the database's writers cannot reach; exit 1 when a chain is broken, a kept head is not in it, or the organization named has no trail\n--organization <name>: only this organization\n--expect-head <digest>: a head digest printed by an earlier verify: the chain must still hold it (a chain rewritten whole, head included, links again)\n${DATA_NOTE}`,
  token:
    "usage: runplane token create [--team <id>] [--organization <name>] [--description <text>] [data flags]\n" +
    "       runplane token list [--team <id>] [--organization <name>] [--sessions] [--revoked] [data flags]\n" +
    "       runplane token revoke <token id> [data flags]\n" +
    `API tokens of the server's existing data (runplane token <subcommand> --help for each one's flags)\n${DATA_NOTE}`,
  // Each subcommand lists only the flags it takes.
  "token create": `usage: runplane token create [flags] [data flags]\na new API token for the owners team of organization demo (or --team of --organization), printed once; needs the server's existing data\n${ownFlags([TEAM_FLAG, ORGANIZATION_FLAG, ["description", "<text>", "what the token is for (default: runplane token create)"]])}${DATA_NOTE}`,
  "token list": `usage: runplane token list [flags] [data flags]\nthe API tokens of organization demo (or --organization), oldest first, one line each: id, team, created, last used, description; never a secret\n${ownFlags([["team", "<id>", "only this team's tokens"], ORGANIZATION_FLAG, ["sessions", "", "also results page sessions (sign-ins), each line starting with session"], ["revoked", "", "also the records that keep a revoked ADMIN_TOKEN revoked, each line starting with revoked"]])}${DATA_NOTE}`,
  "token revoke": `usage: runplane token revoke <token id> [data flags]\nrevoke an API token (its id from runplane token list): the server refuses it from its next request on\n${DATA_NOTE}`,
  doctor: `usage: runplane doctor [server flags]\nrun the checks serve runs before it starts (options, data directory, keyring against the database, storage, ports, egress), changing nothing\n${SERVER_NOTE}`,
  agent: `usage: runplane agent --url <origin> [--token <agent token>] [flags]\ncarry the run task requests of an agent pool from inside a private network: connects out to runplane only, sends each request through its own egress, reports the answers; SIGTERM stops it cleanly\n${ownFlags(AGENT_FLAGS)}`,
  "check-integration":
    "usage: runplane check-integration <url> --hmac-key <key> [--stage post_plan]... [--dialect default|hcp-terraform] [--timeout <ms>]\nplay the platform against a run task integration and report on the contract",
};

export const USAGE = `usage: runplane <command> [flags]   (runplane <command> --help for its flags; runplane --version)
  serve       the reference server (flags mirror its environment variables)
  keygen      a new keyring key (--json: a whole keyring)
  migrate     apply pending schema migrations (--dry-run: list them)
  reencrypt   move sealed values to the keyring's active key (--retire: then drop an unused key)
  audit       audit verify: walk the audit trail's hash chains and name the first break
  token       token create|list|revoke: API tokens (a new one printed once; list; revoke)
  doctor      check options, storage, keyring and egress
  agent       --url <origin> (token in RUNPLANE_AGENT_TOKEN): carry an agent pool's run task requests from a private network
  check-integration <url> --hmac-key <key> [--stage post_plan] [--dialect default|hcp-terraform]
              play the platform against a run task integration and report`;

/** Whether `args` ask for help (`--help` or `-h` anywhere before a `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}
