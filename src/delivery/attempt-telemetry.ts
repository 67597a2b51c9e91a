import type { AttemptOutcomeKind } from "../schemas/delivery-attempts.js";
/**
 * What one delivery attempt tells the host: one structured log event, one count by
 * outcome, one latency sample and one span. Fields are ids, numbers and failure codes only: never
 * the URL, payload, token or HMAC key.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { logs, type Logger } from "../logger.js";
import type { TaskDeliveryRecord } from "../schemas/run-task-records.js";
import { createDeliveryMetrics } from "../telemetry/metrics.js";
import { GLOBAL_TELEMETRY, type Telemetry } from "../telemetry/providers.js";
import { SPAN } from "../telemetry/tracing.js";

/** How an attempt ended: delivered; failed and `retry` or `closed` (no time left before the deadline); `lost` its lease; `released` unsent; `skipped` (nothing to send). */
export type AttemptOutcome = "delivered" | "retry" | "closed" | "lost" | "released" | "skipped";

export interface AttemptEnd {
  status?: number;
  error?: string;
  /** When the retry is due (ISO), for `retry`. */
  nextAttemptAt?: string;
  /** What kind of answer a request that went out (or could not) got; absent when none was attempted. */
  outcomeClass?: OutcomeClass;
}

/**
 * An attempt's answer by kind, for the `runplane.delivery.attempts` counter and the
 * health check: the status class, or why no answer came (`timeout`, `network` for a refused or
 * reset connection or a name that did not resolve, `refused` by the SSRF guard, `skipped` when the
 * request could not be built).
 */
export type OutcomeClass = "1xx" | "2xx" | "3xx" | "4xx" | "5xx" | "timeout" | "network" | "refused" | "skipped";

/** The class of what an attempt saw (`AttemptObservation`). */
export function outcomeClassOf(seen: { outcome: AttemptOutcomeKind; status: number | null; errorCode: string | null }): OutcomeClass {
  if (seen.outcome === "skipped") return "skipped";
  if (seen.outcome === "answered" && seen.status !== null) return `${Math.min(5, Math.max(1, Math.floor(seen.status / 100)))}xx` as OutcomeClass;
  if (seen.errorCode === "timeout") return "timeout";
  return seen.errorCode === "refused-url" || seen.errorCode === "refused-address" ? "refused" : "network";
}

/** Hears each attempt that went out (or could not): its class, and whether it was answered exactly 200. */
export type AttemptListener = (outcomeClass: OutcomeClass, ok: boolean) => void;

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

export function createAttemptTelemetry(logger: Logger, attempted: AttemptListener = () => undefined, telemetry: Telemetry = GLOBAL_TELEMETRY): BeginAttempt {
  const instruments = createDeliveryMetrics(telemetry);
  return (row) => {
    const started = performance.now();
    const attempt = row.attempt + 1;
    const span = telemetry.tracer().startSpan(SPAN.deliveryAttempt, {
      kind: SpanKind.CLIENT,
      attributes: { "runplane.delivery.id": row.id, "runplane.task_result.id": row.taskResultId, "runplane.delivery.attempt": attempt },
    });
    return {
      end(outcome, detail = {}) {
        const seconds = (performance.now() - started) / 1000;
        const attrs = { outcome };
        const metrics = instruments();
        metrics.deliveries.add(1, attrs);
        if (detail.outcomeClass !== undefined) {
          metrics.attempts.add(1, { class: detail.outcomeClass });
          attempted(detail.outcomeClass, detail.status === 200);
        }
        if (outcome !== "skipped" && outcome !== "released") metrics.duration.record(seconds, attrs);
        span.setAttribute("runplane.delivery.outcome", outcome);
        if (detail.status !== undefined) span.setAttribute("http.response.status_code", detail.status);
        if (detail.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: detail.error });
        span.end();
        if (!logs(logger, LEVEL[outcome])) return;
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
