/**
 * Why `health()` says deliveries are failing. Two signs, each cheap: the share of failed
 * attempts this process made in the last `health.window` (counted in memory by its dispatcher),
 * and how long the oldest result has been retrying (one read of the storage's outbox stats, so
 * every host sees every host's retries).
 */
import { shortDuration } from "../domain/short-duration.js";
import type { OutboxFigures } from "../telemetry/metrics.js";
import type { AttemptTally, AttemptWindow } from "./attempt-window.js";
import type { KeyWaits } from "./key-waits.js";
import type { DeliveryHealthSettings } from "./run-task-settings.js";

/** What the health check reads: this process's attempt window and the storage's outbox. */
export interface DeliveryHealthSource {
  now(): Date;
  recent: AttemptWindow;
  outbox(): Promise<OutboxFigures | null>;
  /** decision D40: the keys this host left deliveries for. */
  keyWaits?: KeyWaits;
}

/** `4xx: 4, 5xx: 2, network: 2`: the most frequent first. */
const byClass = (tally: AttemptTally): string =>
  Object.entries(tally.failedByClass)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .map(([name, n]) => `${name}: ${n}`)
    .join(", ");

/** The share of failed attempts, when there are enough to judge and too many failed; else null. */
export function failingReason(tally: AttemptTally, settings: DeliveryHealthSettings): string | null {
  if (tally.attempts < settings.minAttempts || tally.failed / tally.attempts < settings.failureShare) return null;
  return `deliveries failing: ${tally.failed} of ${tally.attempts} attempts in the last ${shortDuration(settings.windowMs)} failed (${byClass(tally)})`;
}

/** The results retrying, when the oldest has been at it for longer than allowed; else null. */
export function retryingReason(figures: OutboxFigures | null, settings: DeliveryHealthSettings): string | null {
  const age = figures?.oldestRetryingAgeSeconds;
  if (!figures?.retrying || age === null || age === undefined || age * 1000 <= settings.retryingForMs) return null;
  const limit = `(longer than ${shortDuration(settings.retryingForMs)})`;
  return figures.retrying === 1
    ? `deliveries retrying: 1 result has been retrying for ${shortDuration(age * 1000)} ${limit}`
    : `deliveries retrying: ${figures.retrying} results retrying, the oldest for ${shortDuration(age * 1000)} ${limit}`;
}

/**
 * Why deliveries are failing, one line per sign, safe to show: counts and outcome classes only,
 * never a host, a URL or what an integration said. `readOutbox` is false while the storage is
 * unreachable (that has its own reason); a failed read leaves the retrying sign out.
 */
export async function deliveryReasons(source: DeliveryHealthSource, settings: DeliveryHealthSettings, readOutbox: boolean): Promise<string[]> {
  const failing = failingReason(source.recent.read(source.now().getTime()), settings);
  const figures = readOutbox ? await source.outbox().catch(() => null) : null;
  const keys = readOutbox && source.keyWaits ? await source.keyWaits.reasons(settings.noKeyHolderForMs) : [];
  return [failing, retryingReason(figures, settings), ...keys].filter((r): r is string => r !== null);
}
