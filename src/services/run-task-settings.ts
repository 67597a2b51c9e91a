import { defaultUserAgent } from "../domain/run-task-request.js";

/** The package version, for the default `User-Agent` (D1); a test keeps it equal to package.json. */
export const RUNPLANE_VERSION = "0.1.0";

/** A duration: milliseconds, or a string such as `"90s"`, `"10m"`, `"1h"`, `"7d"`. */
export type Duration = number | `${number}${"ms" | "s" | "m" | "h" | "d"}`;

/** Run task options of `createRunplane` (decisions D1, D13, D16). */
export interface RunTaskOptions {
  /** Origin the integrations reach the API at: callback, plan and configuration URLs. Default `http://localhost:8080`. */
  publicUrl?: string;
  /** Origin of the UI for `run_app_url`/`workspace_app_url`. Default: `publicUrl`. */
  appUrl?: string;
  /** decision D13: a failed mandatory task sends its stage to `awaiting_override` instead of `failed`. Default false. */
  overridableTasks?: boolean;
  /**
   * decision D16. Default: a fixed 10 minutes from the first delivery attempt. `{ idle, max }`:
   * every `running` callback restarts an `idle` window, never past `max` from the first attempt.
   */
  deadline?: { idle: Duration; max: Duration };
  /** `User-Agent` of run task requests (D1). Default `runplane/<version>`. */
  userAgent?: string;
  /**
   * decision D31: how long delivery attempts are kept (the newest 20 per result); the dispatcher's
   * sweep removes older ones. Default 30 days.
   */
  attempts?: { retention?: Duration };
  /** decision D53: how long audit events are kept; the dispatcher's sweep removes older ones. Default 90 days. */
  audit?: { retention?: Duration };
  /** When `health()` says deliveries are failing. */
  health?: DeliveryHealthOptions;
  /**
   * decision D46: agents' records. `retention`: an agent silent for longer is removed by the
   * dispatcher's sweep (default 7 days). `maxPerToken` (25) and `maxPerPool` (50): agents
   * registered with one agent token and in one pool; past them a registration removes the oldest
   * silent one, or is refused 409 when all are connected.
   */
  agentRecords?: { retention?: Duration; maxPerToken?: number; maxPerPool?: number };
}

/** decision D46: the resolved `agentRecords`. */
export interface AgentRecordSettings {
  retentionMs: number;
  maxPerToken: number;
  maxPerPool: number;
}

export const DEFAULT_AGENT_RECORDS: AgentRecordSettings = { retentionMs: 7 * 86_400_000, maxPerToken: 25, maxPerPool: 50 };
/** The most agents a pool may be allowed: the presence read lists them all in one page per host check. */
export const MAX_AGENTS_PER_POOL = 100;

function agentRecords(options: RunTaskOptions["agentRecords"] = {}): AgentRecordSettings {
  const d = DEFAULT_AGENT_RECORDS;
  const cap = (value: number | undefined, fallback: number, name: string): number => {
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < 1 || value > MAX_AGENTS_PER_POOL) throw new TypeError(`agentRecords.${name} must be an integer from 1 to ${MAX_AGENTS_PER_POOL}`);
    return value;
  };
  return {
    retentionMs: options.retention === undefined ? d.retentionMs : parseDuration(options.retention, "agentRecords.retention"),
    maxPerToken: cap(options.maxPerToken, d.maxPerToken, "maxPerToken"),
    maxPerPool: cap(options.maxPerPool, d.maxPerPool, "maxPerPool"),
  };
}

/** When `health()` says deliveries are failing (`src/services/delivery-health.ts`). */
export interface DeliveryHealthOptions {
  /** How far back this process's attempts are judged. Default `"5m"`. */
  window?: Duration;
  /** The share of failed attempts in the window (above 0, at most 1) that counts as failing. Default 0.5. */
  failureShare?: number;
  /** Fewer attempts than this in the window are not judged. Default 5. */
  minAttempts?: number;
  /** A result retrying (its request answered other than 200) for longer than this counts as failing. Default `"5m"`. */
  retryingFor?: Duration;
  /**
   * decision D34: an agent pool's requests waiting while no agent of the pool has been connected to
   * any host for longer than this count as failing. Default `"5m"`.
   */
  noAgentFor?: Duration;
  /**
   * decision D40: deliveries this host left for a key that no live host holds (a keyring rotated
   * on a host since stopped) for longer than this count as failing. Default `"1m"`.
   */
  noKeyHolderFor?: Duration;
}

export interface DeliveryHealthSettings {
  windowMs: number;
  failureShare: number;
  minAttempts: number;
  retryingForMs: number;
  noAgentForMs: number;
  noKeyHolderForMs: number;
}

export const DEFAULT_DELIVERY_HEALTH: DeliveryHealthSettings = { windowMs: 5 * 60_000, failureShare: 0.5, minAttempts: 5, retryingForMs: 5 * 60_000, noAgentForMs: 5 * 60_000, noKeyHolderForMs: 60_000 };

export type DeadlineRule = { kind: "fixed"; ms: number } | { kind: "idle"; idleMs: number; maxMs: number };

/** The resolved options every run task service reads. */
export interface RunTaskSettings {
  publicUrl: string;
  appUrl: string;
  basePath: string;
  overridableTasks: boolean;
  deadline: DeadlineRule;
  userAgent: string;
  /** decision D24: the host serves configuration versions; without it requests carry a null download URL. */
  configurationDownloads: boolean;
  /** decision D31: delivery attempts older than this are pruned. */
  attemptRetentionMs: number;
  /** decision D53: audit events older than this are pruned. */
  auditRetentionMs: number;
  /** When deliveries count as failing. */
  health: DeliveryHealthSettings;
  /** decision D46: agents' retention and caps. */
  agentRecords: AgentRecordSettings;
}

export const DEFAULT_DEADLINE_MS = 10 * 60 * 1000;
/** decision D31: attempts are kept 30 days unless `attempts.retention` says otherwise. */
export const DEFAULT_ATTEMPT_RETENTION_MS = 30 * 24 * 3_600_000;
/** decision D53: audit events are kept 90 days unless `audit.retention` says otherwise (HCP keeps 14). */
export const DEFAULT_AUDIT_RETENTION_MS = 90 * 24 * 3_600_000;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a positive {@link Duration}, or null when `value` is not one. */
export function durationMs(value: unknown): number | null {
  const match = typeof value === "string" ? /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value) : null;
  const ms = typeof value === "number" ? value : match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : Number.NaN;
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : null;
}

export function parseDuration(value: Duration, name: string): number {
  const ms = durationMs(value);
  if (ms === null) throw new TypeError(`${name} must be a positive duration such as "10m"`);
  return ms;
}

/** Whether `value` is an absolute http: or https: URL (publicUrl, appUrl). */
export function isHttpUrl(value: unknown): boolean {
  if (typeof value !== "string" || !URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === "http:" || protocol === "https:";
}

function deliveryHealth(options: DeliveryHealthOptions = {}): DeliveryHealthSettings {
  const d = DEFAULT_DELIVERY_HEALTH;
  const share = options.failureShare ?? d.failureShare;
  if (!(share > 0 && share <= 1)) throw new TypeError("health.failureShare must be above 0 and at most 1");
  const minAttempts = options.minAttempts ?? d.minAttempts;
  if (!Number.isSafeInteger(minAttempts) || minAttempts < 1) throw new TypeError("health.minAttempts must be a positive integer");
  return {
    windowMs: options.window === undefined ? d.windowMs : parseDuration(options.window, "health.window"),
    failureShare: share,
    minAttempts,
    retryingForMs: options.retryingFor === undefined ? d.retryingForMs : parseDuration(options.retryingFor, "health.retryingFor"),
    noAgentForMs: options.noAgentFor === undefined ? d.noAgentForMs : parseDuration(options.noAgentFor, "health.noAgentFor"),
    noKeyHolderForMs: options.noKeyHolderFor === undefined ? d.noKeyHolderForMs : parseDuration(options.noKeyHolderFor, "health.noKeyHolderFor"),
  };
}

function origin(value: string, name: string): string {
  if (!isHttpUrl(value)) throw new TypeError(`${name} must be an absolute http(s) URL`);
  return value.replace(/\/+$/, "");
}

/**
 * Resolves the options once, at `createRunplane`, after `checkOptions` has named any wrong one
 * (a bad value reaching here directly still throws a TypeError).
 */
export function resolveRunTaskSettings(
  options: RunTaskOptions & { basePath?: string; artifacts?: { configurationVersion?: unknown } },
): RunTaskSettings {
  const publicUrl = origin(options.publicUrl ?? "http://localhost:8080", "publicUrl");
  const deadline: DeadlineRule = options.deadline
    ? { kind: "idle", idleMs: parseDuration(options.deadline.idle, "deadline.idle"), maxMs: parseDuration(options.deadline.max, "deadline.max") }
    : { kind: "fixed", ms: DEFAULT_DEADLINE_MS };
  if (deadline.kind === "idle" && deadline.maxMs < deadline.idleMs) throw new TypeError("deadline.max must not be shorter than deadline.idle");
  return {
    publicUrl,
    appUrl: options.appUrl === undefined ? publicUrl : origin(options.appUrl, "appUrl"),
    basePath: (options.basePath ?? "/api/v2").replace(/\/+$/, ""),
    overridableTasks: options.overridableTasks ?? false,
    deadline,
    userAgent: options.userAgent ?? defaultUserAgent(RUNPLANE_VERSION),
    configurationDownloads: options.artifacts?.configurationVersion !== undefined,
    attemptRetentionMs:
      options.attempts?.retention === undefined ? DEFAULT_ATTEMPT_RETENTION_MS : parseDuration(options.attempts.retention, "attempts.retention"),
    auditRetentionMs: options.audit?.retention === undefined ? DEFAULT_AUDIT_RETENTION_MS : parseDuration(options.audit.retention, "audit.retention"),
    health: deliveryHealth(options.health),
    agentRecords: agentRecords(options.agentRecords),
  };
}
