#!/usr/bin/env node
import { agent } from "./agent.js";
import { audit } from "./audit.js";
import { checkIntegration } from "./check-integration.js";
import { doctor } from "./doctor.js";
import { COMMAND_HELP, USAGE, wantsHelp } from "./help.js";
import { keygen } from "./keygen.js";
import { migrate } from "./migrate.js";
import { reencrypt } from "./reencrypt.js";
import { serve } from "./serve.js";
import { token } from "./token.js";
import { packageVersion } from "./version.js";

/**
 * The `runplane` command: one file per command in this folder. Every error is one line
 * on stderr (`runplane <command>: <message>`, never a stack) and exit code 1; usage errors exit 2.
 */
const out = (line: string): void => void process.stdout.write(`${line}\n`);

const COMMANDS: Record<string, (args: string[]) => Promise<boolean | void> | boolean | void> = {
  serve,
  keygen: (args) => keygen(args, out),
  migrate: (args) => migrate(args, out),
  reencrypt: (args) => reencrypt(args, out),
  audit: (args) => audit(args, out),
  token: (args) => token(args, out),
  doctor: (args) => doctor(args, out),
  "check-integration": (args) => checkIntegration(args, out),
  agent: (args) => agent(args),
};

const [name, ...args] = process.argv.slice(2);
if (name === "--version" || name === "-v" || name === "version") {
  out(packageVersion());
  process.exit(0);
}
const command = name ? COMMANDS[name] : undefined;
if (!command) {
  const help = name === "help" || name === "--help" || name === "-h";
  if (help) process.stdout.write(`${USAGE}\n`);
  else process.stderr.write(`${name ? `runplane: unknown command ${name}\n` : ""}${USAGE}\n`);
  process.exit(help ? 0 : 2);
}
if (wantsHelp(args)) {
  // A subcommand's own help when it has one (`runplane token list --help`).
  process.stdout.write(`${COMMAND_HELP[`${name} ${args[0]}`] ?? COMMAND_HELP[name!]}\n`);
  process.exit(0);
}
try {
  if ((await command(args)) === false) process.exitCode = 1;
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`runplane ${name}: ${message.split("\n")[0]}\n`);
  process.exit(1);
}
