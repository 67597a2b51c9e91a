/**
 * What one delivery attempt tells the host (issue 17): one structured log event, one count by
 * outcome, one latency sample and one span. Fields are ids, numbers and failure codes only: never
 * the URL, payload, token or HMAC key.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { Logger } from "../logger.js";
import type { TaskDeliveryRecord } from "../schemas/run-task-records.js";
import { createDeliveryMetrics } from "../telemetry/metrics.js";
import { SPAN, tracer } from "../telemetry/tracing.js";

/** How an attempt ended: delivered; failed and `retry` or `closed` (no time left before the deadline); `lost` its lease; `released` unsent; `skipped` (nothing to send). */
export type AttemptOutcome = "delivered" | "retry" | "closed" | "lost" | "released" | "skipped";

export interface AttemptEnd {
  status?: number;
  error?: string;
  /** When the retry is due (ISO), for `retry`. */
  nextAttemptAt?: string;
}

export type BeginAttempt = (row: TaskDeliveryRecord) => { end(outcome: AttemptOutcome, detail?: AttemptEnd): void };

// A failure is expected of integrations, so it is a warning; giving up on one is worth an error.
const LEVEL: Record<AttemptOutcome, keyof Logger> = {
  delivered: "info",
  retry: "warn",
  closed: "error",
  lost: "warn",
  released: "debug",
  skipped: "debug",
};

export function createAttemptTelemetry(logger: Logger): BeginAttempt {
  const metrics = createDeliveryMetrics();
  return (row) => {
    const started = performance.now();
    const attempt = row.attempt + 1;
    const span = tracer().startSpan(SPAN.deliveryAttempt, {
      kind: SpanKind.CLIENT,
      attributes: { "runplane.delivery.id": row.id, "runplane.task_result.id": row.taskResultId, "runplane.delivery.attempt": attempt },
    });
    return {
      end(outcome, detail = {}) {
        const seconds = (performance.now() - started) / 1000;
        const attrs = { outcome };
        metrics.deliveries.add(1, attrs);
        if (outcome !== "skipped" && outcome !== "released") metrics.duration.record(seconds, attrs);
        span.setAttribute("runplane.delivery.outcome", outcome);
        if (detail.status !== undefined) span.setAttribute("http.response.status_code", detail.status);
        if (detail.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: detail.error });
        span.end();
        logger[LEVEL[outcome]](`run task delivery ${outcome}`, {
          event: `delivery.${outcome}`,
          deliveryId: row.id,
          taskResultId: row.taskResultId,
          stageId: row.stageId,
          runId: row.runId,
          attempt,
          ...detail,
          durationMs: Math.round(seconds * 1000),
        });
      },
    };
  };
}
