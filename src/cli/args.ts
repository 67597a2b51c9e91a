import { parseArgs, type ParseArgsConfig } from "node:util";
import { closest } from "../suggest.js";

/**
 * The reference server's environment variables as flags: a flag wins over its
 * variable, so `runplane serve --port 9000` and `PORT=9000 runplane serve` are the same server.
 */
export const SERVER_FLAGS = {
  port: "PORT",
  host: "HOST",
  "data-dir": "DATA_DIR",
  "admin-token": "ADMIN_TOKEN",
  dialect: "RUNPLANE_DIALECT",
  "public-url": "PUBLIC_URL",
  "integration-port": "INTEGRATION_PORT",
  "integration-url": "INTEGRATION_URL",
  "integration-hmac-key": "INTEGRATION_HMAC_KEY",
  keyring: "RUNPLANE_KEYRING",
  "database-url": "DATABASE_URL",
  "database-schema": "DATABASE_SCHEMA",
  "database-pool-size": "DATABASE_POOL_SIZE",
  "egress-allow": "EGRESS_ALLOW",
  "egress-allow-wide": "EGRESS_ALLOW_WIDE",
  "egress-excerpts": "EGRESS_EXCERPTS",
  "rate-limit": "RATE_LIMIT",
  "log-url-lifetime": "LOG_URL_LIFETIME",
  "metrics-token": "METRICS_TOKEN",
  "trust-proxy": "TRUST_PROXY",
} as const;

export type ServerVariable = (typeof SERVER_FLAGS)[keyof typeof SERVER_FLAGS];
export type ServerFlag = keyof typeof SERVER_FLAGS;

/** The server flags of `migrate`: where the server's database is. */
export const DATABASE_FLAGS = ["data-dir", "database-url", "database-schema"] as const satisfies readonly ServerFlag[];
/** The server flags of `reencrypt` and `token`: the database and the keyring that opens it. */
export const DATA_FLAGS = [...DATABASE_FLAGS, "keyring"] as const satisfies readonly ServerFlag[];

/** `PORT (--port)`: how messages name a setting, since either spelling may have set it. */
export function settingName(variable: string): string {
  const flag = Object.entries(SERVER_FLAGS).find(([, name]) => name === variable)?.[0];
  return flag ? `${variable} (--${flag})` : variable;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** A command's input: its own flags' values and the environment with the server flags applied. */
export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * Parses `args` strictly (an unknown flag is an error) with `own` flags plus the server flags the
 * command takes: all of them (`serve`, `doctor`), the ones listed, or none.
 */
export function parse(args: string[], own: Options = {}, serverFlags: boolean | readonly ServerFlag[] = true, env: NodeJS.ProcessEnv = process.env): Parsed {
  const options: Options = { ...own };
  const taken = serverFlags === true ? Object.keys(SERVER_FLAGS) : serverFlags === false ? [] : serverFlags;
  for (const flag of taken) options[flag] = { type: "string" };
  const { values, positionals } = parseStrictly(args, options);
  const merged: NodeJS.ProcessEnv = { ...env };
  for (const [flag, name] of Object.entries(SERVER_FLAGS)) {
    const value = values[flag];
    if (typeof value === "string") merged[name] = value;
  }
  return { values: values as Parsed["values"], positionals, env: merged };
}

/** parseArgs, with an unknown flag named in one line with the closest known one. */
function parseStrictly(args: string[], options: Options) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    const { code, message } = error as { code?: unknown; message: string };
    // Node's advice for `--database-pool-size -3` spans three lines; errors here are one line.
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") throw new Error(message.replace(/\n/g, " "));
    const unknown = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /'(-[^']*)'/.exec(message)?.[1] : undefined;
    if (unknown === undefined) throw error;
    const suggestion = closest(unknown.replace(/^-+/, ""), Object.keys(options));
    throw new Error(`unknown flag ${unknown}${suggestion ? `: did you mean --${suggestion}?` : ""} (--help lists the flags)`);
  }
}

/** The data directory the server would use. */
export const dataDirOf = (env: NodeJS.ProcessEnv): string => env.DATA_DIR?.trim() || "./data";
