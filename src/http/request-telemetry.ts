/**
 * One span per API request and counts by route and status. The route is the matched
 * template (`PATCH /task-results/:task_result_id/callback`), never the concrete path, so ids stay
 * out of metric labels; an unmatched path is `unmatched`.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { createHttpMetrics } from "../telemetry/metrics.js";
import { GLOBAL_TELEMETRY, type Telemetry } from "../telemetry/providers.js";
import { SPAN } from "../telemetry/tracing.js";

/** Filled in by the handler once it has matched a route. */
export interface RequestLabels {
  route: string;
}

const CALLBACK_ROUTE = "PATCH /task-results/:task_result_id/callback";

export function createRequestTelemetry(telemetry: Telemetry = GLOBAL_TELEMETRY) {
  const instruments = createHttpMetrics(telemetry);
  return async function observe(request: Request, serve: (request: Request, labels: RequestLabels) => Promise<Response>): Promise<Response> {
    const started = performance.now();
    const labels: RequestLabels = { route: "unmatched" };
    const span = telemetry.tracer().startSpan(SPAN.request, { kind: SpanKind.SERVER, attributes: { "http.request.method": request.method } });
    let status = 500;
    try {
      const response = await serve(request, labels);
      status = response.status;
      return response;
    } finally {
      const attrs = { route: labels.route, status };
      const metrics = instruments();
      metrics.requests.add(1, attrs);
      metrics.duration.record((performance.now() - started) / 1000, attrs);
      if (labels.route === CALLBACK_ROUTE) metrics.callbacks.add(1, { status });
      span.updateName(`${SPAN.request} ${labels.route}`);
      span.setAttributes({ "http.route": labels.route, "http.response.status_code": status });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
