import { metrics, trace } from "@opentelemetry/api";
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

/** A reader that exports nothing: the test collects from it when it wants to look. */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * An in-memory OpenTelemetry SDK, not registered anywhere: pass its providers to runplane
 * (`meterProvider`, `tracerProvider`) or register them (`installOtel`).
 */
export function createOtel() {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  /** Every data point of metric `name`, as `{ attributes, value }`. */
  const points = async (name: string): Promise<DataPoint<unknown>[]> => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as DataPoint<unknown>[]);
  };
  /** Sum of counter `name` over the points whose attributes include `match`. */
  const count = async (name: string, match: Record<string, unknown> = {}): Promise<number> =>
    (await points(name))
      .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
      .reduce((n, p) => n + (typeof p.value === "number" ? p.value : (p.value as Histogram).count), 0);
  return {
    points,
    count,
    spans: () => spans.getFinishedSpans(),
    meterProvider,
    tracerProvider,
    /** Registers both providers as the global ones, as a host would. */
    register() {
      metrics.setGlobalMeterProvider(meterProvider);
      trace.setGlobalTracerProvider(tracerProvider);
    },
    async uninstall() {
      metrics.disable();
      trace.disable();
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}

/** An in-memory OpenTelemetry SDK registered as the global providers, as a host would register one. */
export function installOtel() {
  const otel = createOtel();
  otel.register();
  return otel;
}
export type Otel = ReturnType<typeof createOtel>;
