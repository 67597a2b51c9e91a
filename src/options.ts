import * as z from "zod";
import { KEY_ID, keyProblem } from "./crypto/keyring.js";
import { allowEntryProblem } from "./delivery/address-policy.js";
import { DEFAULT_MIN_PREFIX, WIDE_ADVICE, wideEntryProblem } from "./delivery/wide-entries.js";
import { togetherText, wideTogether } from "./delivery/wide-allowlist.js";
import { DIALECTS } from "./schemas/common.js";
import { durationMs, isHttpUrl } from "./services/run-task-settings.js";
import { closest } from "./suggest.js";

/**
 * `createRunplane` options checked once, up front: a wrong option fails before
 * anything is logged or created, with one error that names it, says what was given and how to fix
 * it. Every option is listed, so a misspelt one (`stoarge`) is an error naming the closest known
 * option instead of being ignored; shapes only TypeScript can check (a logger's methods, a
 * storage's stores) are recognised by a few members.
 */
export class RunplaneOptionsError extends TypeError {
  override readonly name = "RunplaneOptionsError";
  /** The option at fault, as a property path (`keyring.keys[0].key`, `egress.allow[2]`). */
  readonly option: string;
  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}

const KEYGEN = "make a key with `npx runplane keygen` or `generateKey()` from \"runplane\"";

/** How to fix each option, by its top-level name. */
const FIXES: Record<string, string> = {
  storage: 'pass a storage adapter, e.g. `createMemoryStorage()` from "runplane/adapters/memory" or `createSqliteStorage(db)` from "runplane/adapters/sqlite"',
  basePath: 'use a fixed path such as "/api/v2"; runplane matches its own routes below it, so it takes no ":param" or "*" segments',
  dialect: `use one of ${DIALECTS.map((d) => JSON.stringify(d)).join(", ")} ("hcp-terraform" for real Terraform clients and agents)`,
  keyring: `pass { keys: [{ id: "k1", key: "<32 bytes, base64>" }] } or a Keyring from createKeyring(); ${KEYGEN}`,
  readCache: "pass false, or { maxBytes: <positive integer> }",
  publicUrl: 'pass the origin integrations reach this API at, such as "https://runplane.example.com"',
  appUrl: 'pass the origin of your UI, such as "https://app.example.com", or leave it out to use publicUrl',
  deadline: 'pass { idle: "10m", max: "60m" } (milliseconds or strings such as "90s", "10m", "1h"), or leave it out for a fixed 10 minutes',
  egress: 'pass { allow: ["10.1.2.0/24", "127.0.0.1:8081", "tasks.internal:443"] } (CIDRs, IP addresses and host names, each optionally with :port), and optionally resolve, wide, minPrefix and excerpts',
  transport: "pass an HttpTransport ({ send, close }), such as createEgress(...), or leave it out",
  artifacts: "pass { planJson?, configurationVersion?, planLog?, applyLog? }, each a function of the run",
  runs: "pass { details?, policyChecks?, policyCheckRun?, policyCheckOutput? }: functions of the run, policyCheckRun of a policy check id",
  logUrls: 'pass { lifetime: "1h" } (milliseconds or strings such as "10m", "1h"; 1 minute to 24 hours), or leave it out for an hour',
  overridableTasks: "pass true or false",
  userAgent: 'pass a non-empty string such as "my-platform/1.0"',
  attempts: 'pass { retention: "30d" } (milliseconds or strings such as "12h", "7d"), or leave it out to keep attempts 30 days',
  audit: 'pass { retention: "90d" } (milliseconds or strings such as "14d", "365d"), or leave it out to keep audit events 90 days',
  health: 'pass { window: "5m", failureShare: 0.5, minAttempts: 5, retryingFor: "5m", noAgentFor: "5m", noKeyHolderFor: "1m" } (any of them), or leave it out for these defaults',
  agentRecords: 'pass { retention: "7d", maxPerToken: 25, maxPerPool: 50 } (any of them; the caps 1 to 100), or leave it out for these defaults',
  host: 'pass { name: "web-1", intervalMs: 15000 } (either), false for a process that never seals a value, or leave it out',
  trustProxy: "pass how many proxies in front append to X-Forwarded-For (0 to 10), or leave it out for 0 (forwarding headers ignored)",
  rateLimit: "pass { requestsPerSecond: 30 } (HCP Terraform's figure; also burst, unverifiedPerSecond, callbacksPerSecond, callbackBurst, maxKeys), false, or leave it out for no limit",
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isFunction = (v: unknown) => typeof v === "function";

// A storage is recognised by two of its stores and `close`, enough to catch a missing or wrong value.
const isStorage = (v: unknown) => isRecord(v) && isRecord(v.projects) && isRecord(v.variables) && isFunction(v.close);

function checkKeyring(value: unknown, ctx: z.RefinementCtx): void {
  if (value === undefined || (isRecord(value) && isFunction(value.seal) && isFunction(value.open))) return;
  if (!isRecord(value) || !Array.isArray(value.keys)) {
    ctx.addIssue({ code: "custom", message: "must be a Keyring or { keys: [{ id, key }], active? }" });
    return;
  }
  if (value.keys.length === 0) ctx.addIssue({ code: "custom", path: ["keys"], message: "needs at least one key" });
  if (value.source !== undefined && !isFunction(value.source)) ctx.addIssue({ code: "custom", path: ["source"], message: "must be a function returning { keys, active? }" });
  value.keys.forEach((entry: unknown, i) => {
    const id: unknown = isRecord(entry) ? entry.id : undefined;
    if (!KEY_ID.safeParse(id).success) ctx.addIssue({ code: "custom", path: ["keys", i, "id"], message: "must be 1-64 of [A-Za-z0-9_-]" });
    const problem = keyProblem(isRecord(entry) ? entry.key : undefined);
    // The key is a secret: keyProblem describes it without echoing it.
    if (problem) ctx.addIssue({ code: "custom", path: ["keys", i, "key"], message: `(id ${JSON.stringify(id)}) ${problem}` });
  });
}

const fn = () => z.custom(isFunction, { error: "must be a function" }).optional();
const duration = z.custom((v) => durationMs(v) !== null, { error: 'must be a positive duration: milliseconds, or a string such as "90s", "10m", "1h"' });

function checkAllow(entries: string[], ctx: z.RefinementCtx): void {
  entries.forEach((entry, i) => {
    const problem = allowEntryProblem(entry);
    if (problem) ctx.addIssue({ code: "custom", path: [i], message: problem });
  });
}

const prefix = (max: number) => z.custom((v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max, { error: `must be a prefix length, an integer from 0 to ${max}` }).optional();

const EgressSchema = z
  .strictObject({
    allow: z.array(z.string({ error: "must be a string" }), { error: "must be an array of strings" }).superRefine(checkAllow).optional(),
    resolve: fn(),
    wide: z.boolean({ error: "must be true or false" }).optional(),
    minPrefix: z.strictObject({ ipv4: prefix(32), ipv6: prefix(128) }).optional(),
    excerpts: z.enum(["status", "full"], { error: 'must be "status" or "full"' }).optional(),
  })
  .superRefine(checkWide);

/** decision D38: wide entries only with `wide: true`; the fix points at agents rather than the switch. */
function checkWide(egress: { allow?: string[]; wide?: boolean; minPrefix?: { ipv4?: unknown; ipv6?: unknown } }, ctx: z.RefinementCtx): void {
  if (egress.wide === true) return;
  const minPrefix = { ...DEFAULT_MIN_PREFIX, ...(egress.minPrefix as object | undefined) };
  (egress.allow ?? []).forEach((entry, i) => {
    const problem = wideEntryProblem(entry, minPrefix);
    const bound = `(at most a /${minPrefix.ipv4} of an IPv4 private range, a /${minPrefix.ipv6} of fc00::/7; option egress.minPrefix)`;
    if (problem) ctx.addIssue({ code: "custom", path: ["allow", i], message: `is wide: it ${problem}`, params: { fix: `${WIDE_ADVICE} ${bound}, or pass egress.wide: true to accept wide entries knowingly` } });
  });
  // decision D43: entries narrow one by one may be wide together.
  for (const together of wideTogether(egress.allow ?? [], minPrefix)) {
    ctx.addIssue({ code: "custom", path: ["allow"], message: `is wide: its entries ${togetherText(together)}`, params: { fix: `${WIDE_ADVICE}, or pass egress.wide: true to accept wide entries knowingly` } });
  }
}

const DeadlineSchema = z.strictObject({ idle: duration, max: duration }).refine(
  // Shorter only when both parse: a duration that does not already has its own issue.
  (d) => (durationMs(d.max) ?? Infinity) >= (durationMs(d.idle) ?? 0),
  { path: ["max"], message: "must not be shorter than deadline.idle" },
);

const ArtifactsSchema = z.strictObject({ planJson: fn(), configurationVersion: fn(), planLog: fn(), applyLog: fn() });
const RunsSchema = z.strictObject({ details: fn(), policyChecks: fn(), policyCheckRun: fn(), policyCheckOutput: fn() });
/** decision D32: how long a `log-read-url` is honoured: 1 minute to 24 hours. */
const inLifetimeRange = (v: unknown): boolean => {
  const ms = durationMs(v);
  return ms !== null && ms >= 60_000 && ms <= 86_400_000;
};
const LogUrlsSchema = z.strictObject({
  lifetime: z.custom(inLifetimeRange, { error: 'must be a duration from 1 minute to 24 hours, such as "10m" or "1h"' }).optional(),
});
/** decision D31: how long delivery attempts are kept. */
const AttemptsSchema = z.strictObject({ retention: duration.optional() });
/** decision D53: how long audit events are kept. */
const AuditSchema = z.strictObject({ retention: duration.optional() });
/** When `health()` says deliveries are failing. */
const HealthSchema = z.strictObject({
  window: duration.optional(),
  failureShare: z.custom((v) => typeof v === "number" && v > 0 && v <= 1, { error: "must be a share above 0 and at most 1, such as 0.5" }).optional(),
  minAttempts: z.custom((v) => Number.isSafeInteger(v) && (v as number) > 0, { error: "must be a positive integer" }).optional(),
  retryingFor: duration.optional(),
  noAgentFor: duration.optional(),
  noKeyHolderFor: duration.optional(),
});

/** decision D46: agents' retention and caps. */
const agentCap = z.custom((v) => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 100, { error: "must be an integer from 1 to 100" }).optional();
const AgentRecordsSchema = z.strictObject({ retention: duration.optional(), maxPerToken: agentCap, maxPerPool: agentCap });

/** decision D29a: how this instance records itself among the hosts of the storage. */
const HostSchema = z.strictObject({
  name: z.string({ error: "must be a string" }).min(1, "must not be empty").optional(),
  intervalMs: z.custom((v) => Number.isSafeInteger(v) && (v as number) >= 100, { error: "must be an integer number of milliseconds, at least 100" }).optional(),
  schedule: fn(),
});

// `false` or the object, with each issue at its own path (a union would name only `host`).
function checkHost(value: unknown, ctx: z.RefinementCtx): void {
  if (value === false || value === undefined) return;
  const result = HostSchema.safeParse(value);
  if (result.success) return;
  for (const issue of result.error.issues) {
    const message = issue.code === "unrecognized_keys" ? `has no option ${issue.keys.join(", ")} (it has ${Object.keys(HostSchema.shape).join(", ")})` : issue.message;
    ctx.addIssue({ code: "custom", path: issue.path as PropertyKey[], message: isRecord(value) ? message : "must be false or { name?, intervalMs? }" });
  }
}

/** decision D33: per-credential and per-result rate limits. */
const positive = z.custom((v) => typeof v === "number" && Number.isFinite(v) && v > 0, { error: "must be a positive number" }).optional();
const RateLimitSchema = z.strictObject({
  requestsPerSecond: positive,
  burst: z.custom((v) => Number.isSafeInteger(v) && (v as number) >= 1, { error: "must be an integer of at least 1" }).optional(),
  unverifiedPerSecond: positive,
  callbacksPerSecond: positive,
  callbackBurst: z.custom((v) => Number.isSafeInteger(v) && (v as number) >= 1, { error: "must be an integer of at least 1" }).optional(),
  maxKeys: z.custom((v) => Number.isSafeInteger(v) && (v as number) >= 1, { error: "must be an integer of at least 1" }).optional(),
});

function checkRateLimit(value: unknown, ctx: z.RefinementCtx): void {
  if (value === false || value === undefined) return;
  if (!isRecord(value)) return void ctx.addIssue({ code: "custom", message: "must be false or { requestsPerSecond?, burst?, unverifiedPerSecond?, callbacksPerSecond?, callbackBurst?, maxKeys? }" });
  const result = RateLimitSchema.safeParse(value);
  for (const issue of result.success ? [] : result.error.issues) {
    const message = issue.code === "unrecognized_keys" ? `has no option ${issue.keys.join(", ")} (it has ${Object.keys(RateLimitSchema.shape).join(", ")})` : issue.message;
    ctx.addIssue({ code: "custom", path: issue.path as PropertyKey[], message });
  }
}

const OptionsSchema = z.strictObject({
  storage: z.custom(isStorage, { error: (iss) => (iss.input === undefined ? "is required" : "must be a storage adapter") }),
  basePath: z
    .string({ error: "must be a string" })
    .refine((p) => p === "" || p.startsWith("/"), "must start with /")
    .refine((p) => !/[:*?(){}]/.test(p), "must be a fixed path, without parameters or wildcards")
    .optional(),
  dialect: z.enum(DIALECTS, { error: "is not a known dialect" }).optional(),
  keyring: z.unknown().superRefine(checkKeyring).optional(),
  readCache: z.union([z.literal(false), z.strictObject({ maxBytes: z.number().int().positive().optional() })], { error: "is not valid" }).optional(),
  authenticate: fn(),
  clock: fn(),
  logger: z.custom((v) => isRecord(v) && isFunction(v.warn) && isFunction(v.error), { error: "must be a Logger" }).optional(),
  meterProvider: z.custom((v) => isRecord(v) && isFunction(v.getMeter), { error: "must be an OpenTelemetry MeterProvider" }).optional(),
  tracerProvider: z.custom((v) => isRecord(v) && isFunction(v.getTracer), { error: "must be an OpenTelemetry TracerProvider" }).optional(),
  publicUrl: z.custom(isHttpUrl, { error: "must be an absolute http(s) URL" }).optional(),
  appUrl: z.custom(isHttpUrl, { error: "must be an absolute http(s) URL" }).optional(),
  overridableTasks: z.boolean({ error: "must be true or false" }).optional(),
  deadline: DeadlineSchema.optional(),
  userAgent: z.string({ error: "must be a string" }).min(1, "must not be empty").optional(),
  egress: EgressSchema.optional(),
  transport: z.custom((v) => isRecord(v) && isFunction(v.send) && isFunction(v.close), { error: "must be an HttpTransport" }).optional(),
  artifacts: ArtifactsSchema.optional(),
  runs: RunsSchema.optional(),
  logUrls: LogUrlsSchema.optional(),
  attempts: AttemptsSchema.optional(),
  audit: AuditSchema.optional(),
  health: HealthSchema.optional(),
  agentRecords: AgentRecordsSchema.optional(),
  host: z.unknown().superRefine(checkHost).optional(),
  rateLimit: z.unknown().superRefine(checkRateLimit).optional(),
  trustProxy: z.number({ error: "must be a whole number of proxies, 0 to 10" }).int("must be a whole number of proxies, 0 to 10").min(0, "must be 0 to 10").max(10, "must be 0 to 10").optional(),
});

/** Every option name of `createRunplane`; a test keeps it equal to the keys of `RunplaneOptions`. */
export const OPTION_NAMES = Object.keys(OptionsSchema.shape) as (keyof typeof OptionsSchema.shape)[];

/** The known keys at each level an unknown key can appear, for "did you mean". */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  "": OPTION_NAMES,
  egress: Object.keys(EgressSchema.shape),
  "egress.minPrefix": ["ipv4", "ipv6"],
  deadline: ["idle", "max"],
  artifacts: Object.keys(ArtifactsSchema.shape),
  runs: Object.keys(RunsSchema.shape),
  logUrls: Object.keys(LogUrlsSchema.shape),
  readCache: ["maxBytes"],
  attempts: Object.keys(AttemptsSchema.shape),
  audit: Object.keys(AuditSchema.shape),
  health: Object.keys(HealthSchema.shape),
  agentRecords: Object.keys(AgentRecordsSchema.shape),
  host: Object.keys(HostSchema.shape),
  rateLimit: Object.keys(RateLimitSchema.shape),
};

/** A short, secret-free description of what was given. */
function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (isRecord(value)) return `an object with ${Object.keys(value).slice(0, 6).join(", ") || "no keys"}`;
  return String(value);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((v, key) => (isRecord(v) ? v[key as string] : undefined), root);
}

/** `["egress", "allow", 2]` as `egress.allow[2]`. */
const pathOf = (path: readonly PropertyKey[]): string =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`)).join("");

function unknownKeys(issue: z.core.$ZodIssueUnrecognizedKeys): RunplaneOptionsError {
  const parent = pathOf(issue.path);
  const known = KNOWN_KEYS[parent] ?? [];
  const named = issue.keys.map((key) => {
    const suggestion = closest(key, known);
    const option = parent ? `${parent}.${key}` : key;
    return `unknown option "${option}": ${suggestion ? `did you mean "${parent ? `${parent}.` : ""}${suggestion}"?` : `the known ones are ${known.join(", ")}`}`;
  });
  const first = parent ? `${parent}.${issue.keys[0]}` : issue.keys[0]!;
  return new RunplaneOptionsError(first, `createRunplane: ${named.join("; ")}`);
}

/** Throws a {@link RunplaneOptionsError} for the first wrong option; returns when all hold. */
export function checkOptions(options: unknown): void {
  if (!isRecord(options)) throw new RunplaneOptionsError("", `createRunplane needs an options object; got ${describe(options)}. Pass at least { storage }.`);
  const result = OptionsSchema.safeParse(options);
  if (result.success) return;
  // An unknown key first: `stoarge` explains the missing `storage` better than "is required".
  const unknown = result.error.issues.find((i) => i.code === "unrecognized_keys");
  if (unknown) throw unknownKeys(unknown);
  const issue = result.error.issues[0]!;
  const top = String(issue.path[0] ?? "");
  const option = pathOf(issue.path);
  // Keyring issues describe the key themselves; everything else shows the value given.
  const given = top === "keyring" ? "" : `; got ${describe(valueAt(options, issue.path))}`;
  const own = issue.code === "custom" ? (issue.params as { fix?: unknown } | undefined)?.fix : undefined;
  const fix = typeof own === "string" ? own : (FIXES[top] ?? `see docs/reference/options.md`);
  throw new RunplaneOptionsError(option, `createRunplane: option \`${option}\` ${issue.message}${given}. Fix: ${fix}.`);
}
