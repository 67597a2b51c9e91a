/**
 * runplane's metrics, through `@opentelemetry/api` only: the library ships no SDK, so
 * every instrument is a no-op until the host registers a MeterProvider or passes one
 * (`meterProvider`). Instrument sets are made from the provider current at their use and made
 * again when it changes (decision D50, src/telemetry/providers.ts), never per call.
 */
import type { Attributes, BatchObservableResult, Counter, Histogram, Meter } from "@opentelemetry/api";
import { instruments, observe, type Telemetry } from "./providers.js";

// Seconds, not the SDK's default boundaries (which suit milliseconds).
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STAGE_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * Metric names, as docs/reference/metrics.md lists them. Those measured in seconds end in `_seconds` themselves:
 * Prometheus conventions ask for the unit in the name, and the OpenTelemetry Prometheus
 * exporter (0.223) adds `_total` to counters but no unit suffix, so it cannot come twice either.
 */
export const METRIC = {
  deliveries: "runplane.deliveries",
  deliveryAttempts: "runplane.delivery.attempts",
  deliveriesRetrying: "runplane.deliveries.retrying",
  deliveryDuration: "runplane.delivery.duration_seconds",
  outboxDue: "runplane.outbox.due",
  outboxLeased: "runplane.outbox.leased",
  outboxOldestDueAge: "runplane.outbox.oldest_due_age_seconds",
  callbacks: "runplane.callbacks",
  stageDuration: "runplane.stage.duration_seconds",
  httpRequests: "runplane.http.requests",
  httpDuration: "runplane.http.duration_seconds",
} as const;

export interface DeliveryMetrics {
  /** One per finished attempt, by `outcome` (delivered, retry, closed, lost, released). */
  deliveries: Counter;
  /**
   * D31: one per request sent (or that could not be), by `class`: what the integration
   * answered (`2xx`, `4xx`, `5xx`, ...) or why nothing came back (`timeout`, `network`, `refused`,
   * `skipped`). Only an exact 200 delivers; a `2xx` other than 200 is still a failure.
   */
  attempts: Counter;
  /** Seconds from send to answer (or failure), by `outcome`. */
  duration: Histogram;
}

export function createDeliveryMetrics(telemetry: Telemetry): () => DeliveryMetrics {
  return instruments(telemetry, (meter) => ({
    deliveries: meter.createCounter(METRIC.deliveries, { description: "Run task delivery attempts by outcome" }),
    attempts: meter.createCounter(METRIC.deliveryAttempts, { description: "Run task requests sent, by the class of the integration's answer" }),
    duration: meter.createHistogram(METRIC.deliveryDuration, {
      description: "Run task delivery attempt latency",
      unit: "s",
      advice: { explicitBucketBoundaries: REQUEST_BUCKETS },
    }),
  }));
}

export interface HttpMetrics {
  requests: Counter;
  duration: Histogram;
  /** Callbacks (`PATCH /task-results/:id/callback`) by answered status. */
  callbacks: Counter;
}

export function createHttpMetrics(telemetry: Telemetry): () => HttpMetrics {
  return instruments(telemetry, (meter) => ({
    requests: meter.createCounter(METRIC.httpRequests, { description: "API requests by route and status" }),
    duration: meter.createHistogram(METRIC.httpDuration, { description: "API request duration", unit: "s", advice: { explicitBucketBoundaries: REQUEST_BUCKETS } }),
    callbacks: meter.createCounter(METRIC.callbacks, { description: "Run task callbacks by status" }),
  }));
}

/** Stage durations by final status; created by the stage service. */
export function createStageMetrics(telemetry: Telemetry): () => { duration: Histogram<Attributes> } {
  return instruments(telemetry, (meter) => ({
    duration: meter.createHistogram(METRIC.stageDuration, {
      description: "Task stage duration from start to final status",
      unit: "s",
      advice: { explicitBucketBoundaries: STAGE_BUCKETS },
    }),
  }));
}

/** The outbox figures a scrape reads (`TaskDeliveryStore.stats`), with the age already computed. */
export interface OutboxFigures {
  due: number;
  leased: number;
  /** Seconds since the oldest due row became due; 0 when none is due. */
  oldestDueAgeSeconds: number;
  /** Results whose request failed and waits for (or is in) another attempt; null when the storage does not count them. */
  retrying: number | null;
  /** Seconds since the oldest of them was enqueued; 0 when none is retrying, null when not counted. */
  oldestRetryingAgeSeconds: number | null;
}

/**
 * Observable gauges of the outbox, read once per collection (not per delivery). `read` resolves
 * null when the storage offers no stats; nothing is then reported. Returns the unregistration.
 */
export function observeOutbox(telemetry: Telemetry, read: () => Promise<OutboxFigures | null>): () => void {
  return observe(telemetry, (meter) => observeOutboxOn(meter, read));
}

function observeOutboxOn(meter: Meter, read: () => Promise<OutboxFigures | null>): () => void {
  const due = meter.createObservableGauge(METRIC.outboxDue, { description: "Open deliveries due and not leased" });
  const leased = meter.createObservableGauge(METRIC.outboxLeased, { description: "Open deliveries leased to a dispatcher" });
  const age = meter.createObservableGauge(METRIC.outboxOldestDueAge, { description: "Age of the oldest due delivery", unit: "s" });
  const retrying = meter.createObservableGauge(METRIC.deliveriesRetrying, { description: "Task results whose request is being retried" });
  const gauges = [due, leased, age, retrying];
  const callback = async (result: BatchObservableResult): Promise<void> => {
    const figures = await read().catch(() => null);
    if (!figures) return;
    result.observe(due, figures.due);
    result.observe(leased, figures.leased);
    result.observe(age, figures.oldestDueAgeSeconds);
    if (figures.retrying !== null) result.observe(retrying, figures.retrying);
  };
  meter.addBatchObservableCallback(callback, gauges);
  return () => meter.removeBatchObservableCallback(callback, gauges);
}
