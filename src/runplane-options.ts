import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { Keyring, KeyringOptions } from "./crypto/keyring.js";
import type { EgressOptions, HttpTransport } from "./delivery/egress.js";
import type { ArtifactProviders } from "./http/artifact-body.js";
import type { Authenticate } from "./http/handler.js";
import type { RateLimitOptions } from "./http/rate-limit.js";
import type { RunProviders } from "./http/run-providers.js";
import type { Logger, PinoLikeLogger } from "./logger.js";
import type { Dialect } from "./schemas/common.js";
import type { HostOptions } from "./services/host-heartbeat.js";
import type { RunTaskOptions } from "./services/run-task-settings.js";
import type { Storage } from "./storage/types.js";

/** Options of {@link createRunplane}. */
export interface RunplaneOptions {
  /** Where everything is stored: `createMemoryStorage()`, `createSqliteStorage(db)`, or your own adapter. */
  storage: Storage;
  /** Prefix of every route (decision D2). Default `/api/v2`. */
  basePath?: string;
  /**
   * Resolves the caller of an API request; `null` answers 401. Default: bearer API tokens issued by
   * `directory.createApiToken(...)`.
   */
  authenticate?: Authenticate;
  /** Wire dialect (decision D1): `default` (spec words) or `hcp-terraform` (real-client words). */
  dialect?: Dialect;
  /**
   * Keys sealing sensitive values at rest (decision D11). Without one an ephemeral key is generated
   * and a warning logged: sealed values then cannot be read after a restart.
   */
  keyring?: Keyring | KeyringOptions;
  /** Current time. Default `() => new Date()`. */
  clock?: () => Date;
  /**
   * Structured logger: a {@link Logger}, or a pino logger as it is (fields first). Default:
   * `createConsoleLogger()`, warnings and errors as JSON lines on stderr; pass
   * `createConsoleLogger({ level: "info" })` to see every delivery attempt and stage change.
   */
  logger?: Logger | PinoLikeLogger;
  /**
   * decision D50: the MeterProvider runplane's metrics go to. Default: the global one
   * (`metrics.setGlobalMeterProvider`), followed, so registering it before or after
   * `createRunplane` both work.
   */
  meterProvider?: MeterProvider;
  /** decision D50: the TracerProvider runplane's spans go to. Default: the global one. */
  tracerProvider?: TracerProvider;
  /** Origin integrations reach the API at (callback, plan and configuration URLs). Default `http://localhost:8080`. */
  publicUrl?: RunTaskOptions["publicUrl"];
  /** Origin of the UI for `run_app_url`/`workspace_app_url` in run task requests. Default: `publicUrl`. */
  appUrl?: RunTaskOptions["appUrl"];
  /** decision D13: a failed mandatory run task sends its stage to `awaiting_override`. Default false. */
  overridableTasks?: RunTaskOptions["overridableTasks"];
  /** decision D16: default a fixed 10 minutes; `{ idle: "10m", max: "60m" }` for the newer rule. */
  deadline?: RunTaskOptions["deadline"];
  /** `User-Agent` of run task requests (decision D1). Default `runplane/<version>`. */
  userAgent?: RunTaskOptions["userAgent"];
  /**
   * decision D15: the SSRF guard of outbound HTTP. Only public unicast addresses are reached unless
   * `allow` lists CIDRs (`"10.1.2.0/24"`, `"127.0.0.1/32"`) or exact host names; `resolve` replaces
   * the system resolver. Run task URLs are checked against it when saved and when sent.
   * Decision D38: a wide entry (a default route, a whole private range or more of one than
   * `minPrefix`, default `{ ipv4: 16, ipv6: 48 }`, link-local, a metadata address) is refused unless
   * `wide: true`; answers from a destination reached only through `allow` are kept as their status
   * line unless `excerpts: "full"`.
   */
  egress?: Pick<EgressOptions, "allow" | "resolve" | "wide" | "minPrefix" | "excerpts">;
  /**
   * Outbound HTTP for verification requests and, by default, the dispatcher's run task requests.
   * Default: `createEgress({ ...egress, userAgent })`, closed by `close()`. A transport you pass is
   * yours to configure (its own SSRF guard) and close; `egress.allow` still governs the save-time
   * URL check.
   */
  transport?: HttpTransport;
  /**
   * Repeated reads of a workspace's variables are answered from memory while the storage's revision
   * counters (`Storage.revisions`) say nothing they depend on changed; every request still reads
   * those counters, so writes from any process are seen at once. Every request, reads and writes,
   * also reuses its token's principal and authorization decisions while the directory's counter
   * stands (at most 10,000 entries, one minute each). On only with the default authenticator and a
   * storage that keeps revisions. Default `{ maxBytes: 8 MiB }`; `false` turns both off.
   */
  readCache?: false | { maxBytes?: number };
  /**
   * decision D24: what integrations download with a result's access token (or an API credential
   * with `runs >= read`) from `plan_json_api_url` and `configuration_version_download_url`.
   * `planJson(run)` returns the plan as `terraform show -json` writes it, `configurationVersion(run)`
   * the configuration as a `.tar.gz`: an object (sent as JSON), a string, bytes, a Web or Node
   * stream, or a `Response`; null when there is none (404). Without `configurationVersion`, run
   * task requests carry `configuration_version_download_url: null`. `planLog(run)` and
   * `applyLog(run)` give the logs that a plan's and an apply's `log-read-url` serve (D32);
   * without them `log-read-url` is null.
   */
  artifacts?: ArtifactProviders;
  /**
   * What only the host knows of a run, for integrations that read it (`GET /runs/:id`,
   * `/plan`, `/apply`, `/policy-checks`): `details(run)` returns its status and timestamps, has-changes,
   * Terraform version, and its plan's and apply's status and resource counts; `policyChecks(run)`
   * its policy checks; `policyCheckRun(id)` the run id of a policy check, for `GET /policy-checks/:id`
   * (D36); `policyCheckOutput(run, check)` its output for `GET /policy-checks/:id/output` (D49; a
   * summary of the result without it). Each may return null. What the host leaves out is left out of the default
   * dialect's documents and written as go-tfe's zero value in the hcp-terraform dialect.
   */
  runs?: RunProviders;
  /**
   * decision D32: a plan's and an apply's `log-read-url` carry their own short-lived credential
   * in the path (no Authorization header, like HCP Terraform's archivist URLs), honoured by every
   * host sharing the keyring for `lifetime` (milliseconds or "90s", "10m", "1h"; 1 minute to 24
   * hours). Default `{ lifetime: "1h" }`.
   */
  logUrls?: { lifetime?: number | string };
  /**
   * decision D31: delivery attempts (the newest 20 per result, with up to 1 KiB of each answer)
   * older than `retention` are removed by the dispatcher's sweep. Default `{ retention: "30d" }`.
   */
  attempts?: RunTaskOptions["attempts"];
  /**
   * decision D53: audit events older than `retention` are removed by the dispatcher's sweep, in
   * bounded batches (each chain stays verifiable). Default `{ retention: "90d" }` (HCP keeps 14 days).
   */
  audit?: RunTaskOptions["audit"];
  /**
   * decision D31: when `health()` says deliveries are failing: half or more (`failureShare`) of at
   * least `minAttempts` (5) attempts this process made in the last `window` (5 minutes) failed, or
   * a result has been retrying for longer than `retryingFor` (5 minutes, read from the storage's
   * outbox stats, so it covers every host), or an agent pool's requests have waited with no agent
   * of the pool connected to any host for longer than `noAgentFor` (5 minutes, decision D34), or
   * deliveries have waited for a key no live host holds for longer than `noKeyHolderFor` (1 minute, D40).
   * Default `{ window: "5m", failureShare: 0.5, minAttempts: 5, retryingFor: "5m", noAgentFor: "5m", noKeyHolderFor: "1m" }`.
   */
  health?: RunTaskOptions["health"];
  /**
   * decision D46: agents' records: `retention` (7 days) after which a silent agent is removed by the
   * dispatcher's sweep; `maxPerToken` (25) and `maxPerPool` (50) agents, past which a registration
   * removes the oldest silent one or is refused 409. Default `{ retention: "7d", maxPerToken: 25, maxPerPool: 50 }`.
   */
  agentRecords?: RunTaskOptions["agentRecords"];
  /**
   * decision D29a: this instance records in the storage the keys it seals with and when it was last
   * alive (`{ name?, intervalMs? }`: default the machine's host name, every 15 s; live for 3
   * intervals), at once when its keyring reloads, and removes the record at `close()`, so
   * `runplane reencrypt --retire` refuses a key a live host still seals with and `runplane doctor`
   * lists the hosts. On by default, off the request path; `false` for a process that never seals.
   */
  host?: false | HostOptions;
  /**
   * decision D33: requests limited per credential, as HCP Terraform limits them: `{}` for its
   * documented 30 requests a second (`requestsPerSecond`, `burst`), answered 429 with
   * `X-RateLimit-Limit`, `X-RateLimit-Reset` (seconds, a decimal) and `Retry-After` beyond it;
   * every limited answer and `GET /ping` carry the `X-RateLimit-*` headers. Task result callbacks
   * count per result instead (`callbacksPerSecond` 1, `callbackBurst` 10). Kept in memory per
   * process (at most `maxKeys`, 10,000, buckets per limiter), so a cluster allows hosts x the
   * figure. Default: no limit (`false`), for a host that limits in its own proxy.
   */
  rateLimit?: false | RateLimitOptions;
  /**
   * decision D62: how many proxies in front of runplane append to `X-Forwarded-For` (0 to 10).
   * Default 0: the client's address (the audit trail's, an agent's `ip-address`) is the
   * connection's own, given by the mount (`toNodeListener` does; other mounts pass
   * `{ remoteAddress }` as the handler's second argument), and forwarding headers, which any
   * client may write, are ignored. N: the N-th `X-Forwarded-For` entry from the right (else
   * `X-Real-IP`), the address the outermost trusted proxy received the request from.
   */
  trustProxy?: number;
}
