import type { Keyring } from "../crypto/keyring.js";
import type { Logger } from "../logger.js";
import type { Dialect } from "../schemas/common.js";
import type { Storage } from "../storage/types.js";
import type { Telemetry } from "../telemetry/providers.js";
import type { KeyringControl } from "./keyring-reload.js";
import type { AgentSessions } from "./agent-sessions.js";
import type { TaskEndpointCheck } from "./task-endpoint.js";
import type { RunTaskSettings } from "./run-task-settings.js";

/** What every service is built from: injected so tests control time, ids and storage (habit 12). */
export interface ServiceContext {
  storage: Storage;
  keyring: Keyring;
  /** decision D29: reloads `keyring` (`runplane.keyring`), and once when a value needs a key it lacks. */
  keys: KeyringControl;
  logger: Logger;
  dialect: Dialect;
  /** Current time; tests pass a fake clock. */
  now(): Date;
  /** New `<prefix>-<16 base62>` id (D9). */
  newId(prefix: string): string;
  /** Resolved run task options (`resolveRunTaskSettings`); the defaults when absent. */
  runTasks?: RunTaskSettings;
  /** decision D32: how long a `log-read-url` capability is honoured; default one hour. */
  logUrlLifetimeMs?: number;
  /** decision D15: the SSRF policy and verification request before a run task URL or key is saved. */
  taskEndpointCheck?: TaskEndpointCheck;
  /** decision D34: which agent pools have an agent connected; none when absent. */
  agentSessions?: AgentSessions;
  /** decision D50: where metrics and spans go; the global providers, followed, when absent. */
  telemetry?: Telemetry;
}

/** UTC ISO-8601 with milliseconds and `Z` (D9). */
export const isoNow = (ctx: Pick<ServiceContext, "now">): string => ctx.now().toISOString();
