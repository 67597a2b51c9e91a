import { createHash, timingSafeEqual } from "node:crypto";
import { metrics } from "@opentelemetry/api";
import type { Hono } from "hono";
import { createConsoleLogger, type Dispatcher, type Logger, type LogLevel, type Runplane } from "../../src/index.js";
import { importOptional, MissingPeerError } from "../../src/optional-peer.js";
import { LOG_LEVELS } from "./config.js";

/**
 * The server's console logger at `LOG_LEVEL` (default `info`: every delivery attempt, retry,
 * deadline and stage change is on the console). An unknown level stops the start with its name.
 */
export function serverLogger(level = process.env.LOG_LEVEL || "info"): Logger {
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  return createConsoleLogger({ level: level as LogLevel });
}

/**
 * The reference server's metrics and health. runplane itself reports through
 * `@opentelemetry/api` only; this host registers the SDK's MeterProvider with a Prometheus reader
 * that serves nothing by itself: `GET /metrics` collects on each scrape. Call
 * {@link installMetrics} before `createRunplane`: instruments bind to the provider registered when
 * they are created.
 *
 * The SDK packages are optional peers: without them the server runs, `/metrics` answers
 * 404 saying what to install, and `off` says the same for the banner.
 */
export async function installMetrics(): Promise<Metrics> {
  let sdk: [typeof import("@opentelemetry/exporter-prometheus"), typeof import("@opentelemetry/sdk-metrics")];
  try {
    sdk = await Promise.all([
      importOptional(() => import("@opentelemetry/exporter-prometheus"), "@opentelemetry/exporter-prometheus", "GET /metrics"),
      importOptional(() => import("@opentelemetry/sdk-metrics"), "@opentelemetry/sdk-metrics", "GET /metrics"),
    ]);
  } catch (error) {
    if (!(error instanceof MissingPeerError)) throw error;
    return { off: METRICS_OFF, scrape: async () => null, shutdown: async () => undefined };
  }
  const [{ PrometheusExporter, PrometheusSerializer }, { MeterProvider }] = sdk;
  const reader = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  const serializer = new PrometheusSerializer();
  return {
    off: null,
    async scrape() {
      const { resourceMetrics } = await reader.collect();
      return serializer.serialize(resourceMetrics);
    },
    shutdown: () => provider.shutdown(),
  };
}

const METRICS_OFF = "metrics are off: npm install @opentelemetry/sdk-metrics @opentelemetry/exporter-prometheus to serve /metrics";

export interface Metrics {
  /** Why `/metrics` serves nothing (the SDK is not installed), or null when it serves. */
  off: string | null;
  /** The Prometheus text exposition of every metric now; null when metrics are off. */
  scrape(): Promise<string | null>;
  shutdown(): Promise<void>;
}

export interface Health {
  /**
   * Whether this host works (its storage answers, its dispatcher runs): `/healthz` answers 503
   * when it does not. Deliveries failing make the status `degraded` but leave `ok`
   * true and the answer 200: an integration's fault is not fixed by restarting or unrouting hosts.
   */
  ok: boolean;
  /** `degraded` exactly when `reasons` is not empty (decision D28). */
  status: "ok" | "degraded";
  /** Each cause of `degraded`, one short line: runplane's own (`runplane.health()`), then the server's. */
  reasons: string[];
  storage: "ok" | "busy" | "unreachable";
  dispatcher: "running" | "stopped";
  /** `failing` while too many recent attempts failed or a result retries too long (`reasons` says which). */
  deliveries: "ok" | "failing";
  /** Seconds the oldest due delivery has waited; null when the storage offers no outbox stats. */
  oldestDueDeliveryAgeSeconds: number | null;
}

/**
 * `runplane.health()` (a storage read, `storage unreachable: <reason>` while the database is away,
 * D28; then deliveries failing), then the outbox figures and the dispatcher: 200 while this
 * host works, else 503, with the reasons either way. The oldest due delivery's age is reported,
 * not judged: how long is too long is the operator's alert to set.
 */
export async function checkHealth(runplane: Runplane, dispatcher: Pick<Dispatcher, "isRunning">): Promise<Health> {
  const own = await runplane.health();
  const reasons = [...own.reasons];
  // While the storage is away there is nothing more to read.
  const outbox =
    own.storage === "ok"
      ? await runplane.runTasks.deliveries.outbox().then(
          (figures) => ({ read: true, age: figures?.oldestDueAgeSeconds ?? null }),
          () => ({ read: false, age: null }),
        )
      : { read: true, age: null };
  if (!outbox.read) reasons.push("storage read failed: outbox");
  const running = dispatcher.isRunning();
  if (!running) reasons.push("dispatcher stopped");
  const storage = outbox.read ? own.storage : ("unreachable" as const);
  return {
    ok: storage === "ok" && running,
    status: reasons.length === 0 ? "ok" : "degraded",
    reasons,
    storage,
    dispatcher: running ? "running" : "stopped",
    deliveries: own.deliveries,
    oldestDueDeliveryAgeSeconds: outbox.age,
  };
}

/** Whether `header` is `Bearer <token>`, compared in constant time (as digests, so lengths may differ). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/.exec(header ?? "")?.[1] ?? "";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * Mounts `GET /metrics` (Prometheus text format) and `GET /healthz` (JSON; 200 or 503). With
 * `metricsToken` (METRICS_TOKEN) a scrape needs `Authorization: Bearer <it>`: the metrics name
 * routes, counts and outbox figures, which are for the operator. Health stays open for probes.
 */
export function mountObservability(
  routes: Hono,
  scrape: () => Promise<string | null>,
  runplane: Runplane,
  dispatcher: Pick<Dispatcher, "isRunning">,
  options: { metricsToken?: string | undefined } = {},
): void {
  const { metricsToken } = options;
  routes.get("/metrics", async (c) => {
    if (metricsToken !== undefined && !bearerMatches(c.req.header("authorization"), metricsToken)) {
      return c.text("/metrics needs Authorization: Bearer <METRICS_TOKEN>\n", 401, { "www-authenticate": 'Bearer realm="metrics"' });
    }
    const text = await scrape();
    if (text === null) return c.text(`${METRICS_OFF}\n`, 404);
    return c.body(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  routes.get("/healthz", async (c) => {
    const health = await checkHealth(runplane, dispatcher);
    return c.json(health, health.ok ? 200 : 503);
  });
}
