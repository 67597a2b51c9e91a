import type { Problem, ServerConfig } from "./config.js";

/**
 * One check's verdict: what to fix, a note for its ok line, a warning (the setup works, but the
 * operator accepted a risk, such as EGRESS_ALLOW_WIDE), or why it could not be checked.
 */
export type Verdict = { fix: string } | { note: string } | { warn: string } | { skip: string };

/** What a check gets: the settings, and which of them are wrong (a check may then skip). */
export interface CheckInput {
  env: NodeJS.ProcessEnv;
  config: ServerConfig;
  problems: Problem[];
}

export interface ServerCheck {
  name: string;
  run(input: CheckInput): Promise<Verdict>;
}
