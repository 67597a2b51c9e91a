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
 * The reference server's metrics and health (issue 17). runplane itself reports through
 * `@opentelemetry/api` only; this host registers the SDK's MeterProvider with a Prometheus reader
 * that serves nothing by itself: `GET /metrics` collects on each scrape. Call
 * {@link installMetrics} before `createRunplane`: instruments bind to the provider registered when
 * they are created.
 *
 * The SDK packages are optional peers (issue 24): without them the server runs, `/metrics` answers
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
  ok: boolean;
  storage: "ok" | "unreachable";
  dispatcher: "running" | "stopped";
  /** Seconds the oldest due delivery has waited; null when the storage offers no outbox stats. */
  oldestDueDeliveryAgeSeconds: number | null;
}

/**
 * Storage reachable (one outbox read) and the dispatcher running: 200, else 503. The oldest due
 * delivery's age is reported, not judged: how long is too long is the operator's alert to set.
 */
export async function checkHealth(runplane: Runplane, dispatcher: Pick<Dispatcher, "isRunning">): Promise<Health> {
  const outbox = await runplane.runTasks.deliveries.outbox().then(
    (figures) => ({ reachable: true, age: figures?.oldestDueAgeSeconds ?? null }),
    () => ({ reachable: false, age: null }),
  );
  const running = dispatcher.isRunning();
  return {
    ok: outbox.reachable && running,
    storage: outbox.reachable ? "ok" : "unreachable",
    dispatcher: running ? "running" : "stopped",
    oldestDueDeliveryAgeSeconds: outbox.age,
  };
}

/** Mounts `GET /metrics` (Prometheus text format) and `GET /healthz` (JSON; 200 or 503). */
export function mountObservability(
  routes: Hono,
  scrape: () => Promise<string | null>,
  runplane: Runplane,
  dispatcher: Pick<Dispatcher, "isRunning">,
): void {
  routes.get("/metrics", async (c) => {
    const text = await scrape();
    if (text === null) return c.text(`${METRICS_OFF}\n`, 404);
    return c.body(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  routes.get("/healthz", async (c) => {
    const health = await checkHealth(runplane, dispatcher);
    return c.json(health, health.ok ? 200 : 503);
  });
}
