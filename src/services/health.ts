import type { Storage } from "../storage/types.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";

/** What `runplane.health()` resolves (decision D28). */
export interface RunplaneHealth {
  /** `degraded` exactly when `reasons` is not empty. */
  status: "ok" | "degraded";
  /**
   * Why the instance is degraded, one short line per cause (`storage unreachable: connection
   * refused`), safe to show and log: never a host, a statement or a value. Empty when `ok`.
   */
  reasons: string[];
  /** Whether one cheap storage read answered just now. */
  storage: "ok" | "unreachable";
}

/** A name no organization has: reading it is one primary-key lookup that finds nothing. */
const PROBE = "runplane-health-probe";

/**
 * One check: null when healthy, else its reason. More checks (deliveries failing, issue 26) join
 * the list in {@link createHealthCheck}; each adds its own reasons.
 */
type Check = () => Promise<string | null>;

const storageCheck =
  (storage: Storage): Check =>
  async () => {
    try {
      await storage.organizations.get(PROBE);
      return null;
    } catch (error) {
      if (isStorageUnavailableError(error)) return `storage unreachable: ${error.reason}`;
      // Only the error's name: a driver's message may quote a host or a value.
      return `storage read failed: ${error instanceof Error ? error.name : typeof error}`;
    }
  };

/** `health()`: runs every check, each at most one cheap read, and never throws. */
export function createHealthCheck(storage: Storage): () => Promise<RunplaneHealth> {
  const probeStorage = storageCheck(storage);
  return async () => {
    const storageReason = await probeStorage();
    const reasons = [storageReason].filter((r): r is string => r !== null);
    return { status: reasons.length === 0 ? "ok" : "degraded", reasons, storage: storageReason === null ? "ok" : "unreachable" };
  };
}
