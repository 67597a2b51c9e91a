import { SERVER_FLAGS } from "./args.js";

/**
 * `runplane --help` and `runplane <command> --help` (issue 24): what each command does and every
 * flag it takes. The server flags are listed from SERVER_FLAGS, so a new one cannot be left out.
 */
const SERVER = Object.entries(SERVER_FLAGS)
  .map(([flag, name]) => `  --${flag.padEnd(22)} ${name}`)
  .join("\n");

const SERVER_NOTE = `server flags (each wins over its environment variable):\n${SERVER}`;

export const COMMAND_HELP: Record<string, string> = {
  serve: `usage: runplane serve [server flags]\nthe reference server: the API under /api/v2, the results page, the demo and its example integration\n${SERVER_NOTE}`,
  keygen: "usage: runplane keygen [--json] [--id <key id>]\na new 32-byte keyring key, base64 (--json: a whole keyring with that key active)",
  migrate: `usage: runplane migrate [--dry-run] [server flags]\napply pending schema migrations to the server's database (--dry-run: list them, apply nothing)\n${SERVER_NOTE}`,
  reencrypt: `usage: runplane reencrypt [server flags]\nmove every sealed value to the keyring's active key\n${SERVER_NOTE}`,
  token: `usage: runplane token create [--team <id>] [--organization <name>] [--description <text>] [server flags]\na new API token for the owners team (or --team), printed once\n${SERVER_NOTE}`,
  doctor: `usage: runplane doctor [server flags]\ncheck what serve checks: options, storage, keyring and egress, without starting\n${SERVER_NOTE}`,
  "check-integration":
    "usage: runplane check-integration <url> --hmac-key <key> [--stage post_plan]... [--dialect default|hcp-terraform] [--timeout <ms>]\nplay the platform against a run task integration and report on the contract",
};

export const USAGE = `usage: runplane <command> [flags]   (runplane <command> --help for its flags)
  serve       the reference server (flags mirror its environment variables)
  keygen      a new keyring key (--json: a whole keyring)
  migrate     apply pending schema migrations (--dry-run: list them)
  reencrypt   move sealed values to the keyring's active key
  token       token create [--team <id>]: a new owners (or team) API token
  doctor      check options, storage, keyring and egress
  check-integration <url> --hmac-key <key> [--stage post_plan] [--dialect default|hcp-terraform]
              play the platform against a run task integration and report`;

/** Whether `args` ask for help (`--help` or `-h` anywhere before a `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}
