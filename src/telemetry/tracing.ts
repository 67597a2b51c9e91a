/**
 * runplane's spans, through `@opentelemetry/api` only: no-ops until the host registers
 * a TracerProvider. The tracer is looked up per span, not kept: `trace.disable()` (a host
 * re-registering, tests) replaces the global proxy, and a kept tracer would stay on the old one.
 * Providers cache their tracers by name, so the look-up allocates nothing.
 */
import { trace, type Tracer } from "@opentelemetry/api";

export const tracer = (): Tracer => trace.getTracer("runplane");

/** Span names, as docs/reference/metrics.md lists them. */
export const SPAN = {
  request: "runplane.http.request",
  deliveryAttempt: "runplane.delivery.attempt",
} as const;
