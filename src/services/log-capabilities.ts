import { signLogCapability, verifyLogCapability, type LogKind } from "../domain/log-capability.js";
import type { ServiceContext } from "./context.js";

/**
 * decision D32: the capabilities `log-read-url` carries. Signed with the keyring's active key,
 * verified with any key it holds (a host that has rotated still honours what it signed before),
 * so every host of a cluster sharing the keyring verifies any host's URL without state.
 */

/** HCP's archivist URLs are short-lived; an hour covers a run task's read of a running plan's log. */
export const DEFAULT_LOG_URL_LIFETIME_MS = 60 * 60 * 1000;
const PURPOSE = "log-read-url";

export interface VerifiedLog {
  runId: string;
  kind: LogKind;
}

export function createLogCapabilities(ctx: Pick<ServiceContext, "keyring" | "now" | "logUrlLifetimeMs">) {
  const lifetimeMs = ctx.logUrlLifetimeMs ?? DEFAULT_LOG_URL_LIFETIME_MS;
  const seconds = () => Math.floor(ctx.now().getTime() / 1000);
  return {
    lifetimeMs,
    /** The capability for one log of one run, or null when the keyring derives no MAC keys. */
    issue(runId: string, kind: LogKind): string | null {
      const keys = ctx.keyring.macKeys?.(PURPOSE);
      if (!keys) return null;
      return signLogCapability({ runId, kind, expiresAt: seconds() + Math.ceil(lifetimeMs / 1000) }, keys.active);
    },
    /** The log a capability grants, or null when it is malformed, forged or expired (all alike: 404). */
    verify(capability: string): VerifiedLog | null {
      const keys = ctx.keyring.macKeys?.(PURPOSE);
      if (!keys) return null;
      const checked = verifyLogCapability(capability, keys.all, seconds());
      return checked.ok ? { runId: checked.claims.runId, kind: checked.claims.kind } : null;
    },
  };
}
export type LogCapabilities = ReturnType<typeof createLogCapabilities>;
