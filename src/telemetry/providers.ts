/**
 * decision D50: where an instance's metrics and spans go. `@opentelemetry/api`'s global meter
 * provider is not a proxy: a meter taken before the host registers its MeterProvider hands out
 * no-op instruments for good. So without a `meterProvider` option runplane follows the global
 * one: each instrument set is made from the provider current at its use, and made again when that
 * provider changes (a property read per use). Observable gauges are only ever called by the
 * provider they were registered with, so `observe` looks again every second while it follows.
 */
import { metrics, trace, type Meter, type MeterProvider, type Tracer, type TracerProvider } from "@opentelemetry/api";

export const METER_NAME = "runplane";
const TRACER_NAME = "runplane";

/** How often a followed observation checks whether the global MeterProvider changed. */
export const FOLLOW_INTERVAL_MS = 1_000;

export interface Telemetry {
  /** The MeterProvider to use now: the option, or the global one at this moment. */
  meterProvider(): MeterProvider;
  /** A tracer of the option's TracerProvider, or of the global proxy (which follows registrations itself). */
  tracer(): Tracer;
  /** True when the meter provider is the global one, which may change. */
  follows: boolean;
}

export interface TelemetryOptions {
  meterProvider?: MeterProvider;
  tracerProvider?: TracerProvider;
}

export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  const { meterProvider, tracerProvider } = options;
  // The global tracer is looked up per span, not kept: `trace.disable()` replaces the global proxy.
  const own = tracerProvider?.getTracer(TRACER_NAME);
  return {
    meterProvider: meterProvider ? () => meterProvider : () => metrics.getMeterProvider(),
    tracer: own ? () => own : () => trace.getTracer(TRACER_NAME),
    follows: meterProvider === undefined,
  };
}

/** Follows the global providers: what an instance built without the options uses, and tests of parts. */
export const GLOBAL_TELEMETRY: Telemetry = createTelemetry();

/** Instruments made by `make` from the current provider's meter, made again when the provider changes. */
export function instruments<T>(telemetry: Telemetry, make: (meter: Meter) => T): () => T {
  let provider: MeterProvider | undefined;
  let made: T | undefined;
  return () => {
    const now = telemetry.meterProvider();
    if (now !== provider || made === undefined) {
      provider = now;
      made = make(now.getMeter(METER_NAME));
    }
    return made;
  };
}

/**
 * Registers observations with `register(meter)` (which returns its unregistration) on the current
 * provider, and again on a new one when the global provider changes. Returns the unregistration.
 */
export function observe(telemetry: Telemetry, register: (meter: Meter) => () => void): () => void {
  let provider = telemetry.meterProvider();
  let unregister = register(provider.getMeter(METER_NAME));
  const timer = telemetry.follows
    ? setInterval(() => {
        const now = telemetry.meterProvider();
        if (now === provider) return;
        unregister();
        provider = now;
        unregister = register(now.getMeter(METER_NAME));
      }, FOLLOW_INTERVAL_MS)
    : null;
  // A host's exit must not wait for this check.
  timer?.unref();
  return () => {
    if (timer) clearInterval(timer);
    unregister();
  };
}
