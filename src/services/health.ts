import type { Storage } from "../storage/types.js";
import { isStorageBusyError, isStorageUnavailableError } from "../storage/unavailable.js";
import { agentReasons } from "./agent-health.js";
import { deliveryReasons, type DeliveryHealthSource } from "./delivery-health.js";
import type { DeliveryHealthSettings } from "./run-task-settings.js";

/** What `runplane.health()` resolves (decision D28). */
export interface RunplaneHealth {
  /** `degraded` exactly when `reasons` is not empty. */
  status: "ok" | "degraded";
  /**
   * Why the instance is degraded, one short line per cause (`storage unreachable: connection
   * refused`), safe to show and log: never a host, a statement or a value. Empty when `ok`.
   */
  reasons: string[];
  /**
   * Whether one cheap storage read answered just now: `busy` when it did not but the database
   * answers (a lock or load holds the read), `unreachable` when the database does not answer.
   */
  storage: "ok" | "busy" | "unreachable";
  /**
   * `failing` while too many of this process's recent attempts failed, a result has
   * been retrying for too long, or an agent pool's requests have waited with no agent of the pool
   * connected to any host for too long (option `health`); each sign is one of `reasons`. An integration's
   * fault, not this instance's: a probe that restarts or unroutes hosts should not act on it.
   */
  deliveries: "ok" | "failing";
}

/** A name no organization has: reading it is one primary-key lookup that finds nothing. */
const PROBE = "runplane-health-probe";

/** One check: null when healthy, else its reason. */
type Check = () => Promise<string | null>;

/**
 * How long the probe waits: a storage that goes silent (a partition, a hung server) answers neither
 * way for minutes, and a health check that hangs with it tells a load balancer nothing.
 */
export const HEALTH_PROBE_TIMEOUT_MS = 2_000;

/** `check`, or the silent storage's reason once it has waited HEALTH_PROBE_TIMEOUT_MS. */
const bounded =
  (check: Check): Check =>
  async () => {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`storage unreachable: no answer within ${HEALTH_PROBE_TIMEOUT_MS} ms`), HEALTH_PROBE_TIMEOUT_MS)));
    try {
      return await Promise.race([check(), silent]);
    } finally {
      clearTimeout(timer);
    }
  };

/**
 * The probe's read, bounded. A read still silent halfway through its bound is joined by a statement
 * touching no table (`Storage.ping`): if that answered by the bound, the database is there and a
 * lock or load holds the read (busy), else it is unreachable. Both within the one bound: a probe
 * that waited for the ping after the read took twice as long (found from outside).
 */
const storageCheck = (storage: Storage): Check => async () => {
  let pinged = false;
  const ping = storage.ping ? setTimeout(() => void storage.ping!().then(() => (pinged = true), () => undefined), HEALTH_PROBE_TIMEOUT_MS / 2) : undefined;
  try {
    const reason = await bounded(() => read(storage))();
    return reason?.startsWith(SILENT) && pinged ? `storage busy: a read waited ${HEALTH_PROBE_TIMEOUT_MS} ms while the database answers (a lock or load holds it)` : reason;
  } finally {
    clearTimeout(ping);
  }
};

const SILENT = "storage unreachable: no answer";

const read = async (storage: Storage): Promise<string | null> => {
  try {
    await storage.organizations.get(PROBE);
    return null;
  } catch (error) {
    if (isStorageUnavailableError(error)) return `${isStorageBusyError(error) ? "storage busy" : "storage unreachable"}: ${error.reason}`;
    // Only the error's name: a driver's message may quote a host or a value.
    return `storage read failed: ${error instanceof Error ? error.name : typeof error}`;
  }
};

/**
 * `health()`: the storage probe, then the deliveries (this process's attempt window in
 * memory, and the outbox stats while the storage answers); at most two cheap reads, never throws.
 */
export function createHealthCheck(
  storage: Storage,
  deliveries: DeliveryHealthSource,
  settings: DeliveryHealthSettings,
  /** Why this host's write (its heartbeat, D29a) fails, or null: a storage that reads but refuses writes. */
  writeCheck: () => Promise<string | null> = async () => null,
): () => Promise<RunplaneHealth> {
  const probeStorage = storageCheck(storage);
  const probeWrites = bounded(async () => {
    const failed = storage.writesUnavailable?.() ?? (await writeCheck());
    return failed === null ? null : `storage refuses writes: ${failed}`;
  });
  return async () => {
    const storageReason = (await probeStorage()) ?? (await probeWrites());
    const failing = await deliveryReasons(deliveries, settings, storageReason === null);
    // decision D34: a pool whose requests wait with no agent anywhere (not this host's fault either).
    if (storageReason === null) failing.push(...(await agentReasons(storage, deliveries.now(), settings.noAgentForMs).catch(() => [])));
    const reasons = [storageReason, ...failing].filter((r): r is string => r !== null);
    return {
      status: reasons.length === 0 ? "ok" : "degraded",
      reasons,
      storage: storageReason === null ? "ok" : storageReason.startsWith("storage busy") ? "busy" : "unreachable",
      deliveries: failing.length === 0 ? "ok" : "failing",
    };
  };
}
