import { metrics } from "@opentelemetry/api";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { Hono } from "hono";
import { createConsoleLogger, type Dispatcher, type Logger, type LogLevel, type Runplane } from "../../src/index.js";

const LEVELS: readonly string[] = ["debug", "info", "warn", "error"];

/**
 * The server's console logger at `LOG_LEVEL` (default `info`: every delivery attempt, retry,
 * deadline and stage change is on the console). An unknown level stops the start with its name.
 */
export function serverLogger(level = process.env.LOG_LEVEL || "info"): Logger {
  if (!LEVELS.includes(level)) throw new Error(`LOG_LEVEL must be one of ${LEVELS.join(", ")}`);
  return createConsoleLogger({ level: level as LogLevel });
}

/**
 * The reference server's metrics and health (issue 17). runplane itself reports through
 * `@opentelemetry/api` only; this host registers the SDK's MeterProvider with a Prometheus reader
 * that serves nothing by itself: `GET /metrics` collects on each scrape. Call
 * {@link installMetrics} before `createRunplane`: instruments bind to the provider registered when
 * they are created.
 */
export function installMetrics() {
  const reader = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  const serializer = new PrometheusSerializer();
  return {
    /** The Prometheus text exposition of every metric now. */
    async scrape(): Promise<string> {
      const { resourceMetrics } = await reader.collect();
      return serializer.serialize(resourceMetrics);
    },
    shutdown: () => provider.shutdown(),
  };
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
  scrape: () => Promise<string>,
  runplane: Runplane,
  dispatcher: Pick<Dispatcher, "isRunning">,
): void {
  routes.get("/metrics", async (c) => c.body(await scrape(), 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }));
  routes.get("/healthz", async (c) => {
    const health = await checkHealth(runplane, dispatcher);
    return c.json(health, health.ok ? 200 : 503);
  });
}
