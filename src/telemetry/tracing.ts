/**
 * runplane's spans, through `@opentelemetry/api` only: no-ops until the host registers a
 * TracerProvider or passes one (`tracerProvider`); each instance's tracer comes from its
 * `Telemetry` (decision D50, src/telemetry/providers.ts).
 */

/** Span names, as docs/reference/metrics.md lists them. */
export const SPAN = {
  request: "runplane.http.request",
  deliveryAttempt: "runplane.delivery.attempt",
} as const;
