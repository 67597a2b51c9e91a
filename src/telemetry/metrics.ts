/**
 * runplane's metrics, through `@opentelemetry/api` only (issue 17): the library ships no SDK, so
 * every instrument is a no-op until the host registers a MeterProvider. The API hands out no-op
 * instruments to a meter taken before that registration, so instruments are created when an
 * instance is built (once, never per call), not when this module loads.
 */
import { metrics, type Attributes, type Counter, type Histogram } from "@opentelemetry/api";

export const METER_NAME = "runplane";

/** Metric names, as the README lists them. */
export const METRIC = {
  deliveries: "runplane.deliveries",
  deliveryDuration: "runplane.delivery.duration",
  outboxDue: "runplane.outbox.due",
  outboxLeased: "runplane.outbox.leased",
  outboxOldestDueAge: "runplane.outbox.oldest_due_age",
  callbacks: "runplane.callbacks",
  stageDuration: "runplane.stage.duration",
  httpRequests: "runplane.http.requests",
  httpDuration: "runplane.http.duration",
} as const;

export interface DeliveryMetrics {
  /** One per finished attempt, by `outcome` (delivered, retry, closed, lost, released). */
  deliveries: Counter;
  /** Seconds from send to answer (or failure), by `outcome`. */
  duration: Histogram;
}

export function createDeliveryMetrics(): DeliveryMetrics {
  const meter = metrics.getMeter(METER_NAME);
  return {
    deliveries: meter.createCounter(METRIC.deliveries, { description: "Run task delivery attempts by outcome" }),
    duration: meter.createHistogram(METRIC.deliveryDuration, { description: "Run task delivery attempt latency", unit: "s" }),
  };
}

export interface HttpMetrics {
  requests: Counter;
  duration: Histogram;
  /** Callbacks (`PATCH /task-results/:id/callback`) by answered status. */
  callbacks: Counter;
}

export function createHttpMetrics(): HttpMetrics {
  const meter = metrics.getMeter(METER_NAME);
  return {
    requests: meter.createCounter(METRIC.httpRequests, { description: "API requests by route and status" }),
    duration: meter.createHistogram(METRIC.httpDuration, { description: "API request duration", unit: "s" }),
    callbacks: meter.createCounter(METRIC.callbacks, { description: "Run task callbacks by status" }),
  };
}

/** Stage durations by final status; created by the stage service. */
export function createStageMetrics(): { duration: Histogram<Attributes> } {
  return {
    duration: metrics
      .getMeter(METER_NAME)
      .createHistogram(METRIC.stageDuration, { description: "Task stage duration from start to final status", unit: "s" }),
  };
}
