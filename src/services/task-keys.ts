import { invalid } from "../errors.js";
import type { RunTaskRecord } from "../schemas/run-task-records.js";
import { ATTRIBUTES } from "./config-writes.js";
import type { ServiceContext } from "./context.js";
import { sealedBinding } from "./sealing.js";
import type { TaskEndpoint } from "./task-endpoint.js";

/** decision D11: the HMAC key is sealed for its row; nothing else ever opens it but delivery. */
export const hmacKeyBinding = (taskId: string): string => sealedBinding("tasks.hmac_key", taskId);

/** A run task's HMAC key: sealing it for its row, and what a change of URL or key must verify (D15). */
export function createTaskKeys(ctx: ServiceContext) {
  /** The stored key in plaintext; `undefined` when this keyring cannot open it. */
  const open = (row: RunTaskRecord): string | null | undefined => {
    try {
      return row.hmacKey === null ? null : ctx.keyring.open(row.hmacKey, hmacKeyBinding(row.id));
    } catch {
      return undefined;
    }
  };
  return {
    /** The key sealed for task `id`'s row (D11), or null. */
    sealFor: (id: string, key: string | null): string | null => (key === null ? null : ctx.keyring.seal(key, hmacKeyBinding(id))),
    /**
     * decision D15: the endpoint a PATCH would leave, when its URL or key differs from the stored
     * one, or its requests take another way (`rerouted`: the agent pool changed, D34), so it must
     * answer the verification request first; null when none of them changes.
     */
    changedEndpoint(current: RunTaskRecord, url: string | undefined, key: string | null | undefined, rerouted = false): TaskEndpoint | null {
      const sameUrl = url === undefined || url === current.url;
      if (sameUrl && key === undefined && !rerouted) return null;
      const stored = open(current);
      const unchanged = sameUrl && !rerouted;
      if (key !== undefined) return unchanged && key === stored ? null : { organization: current.organization, url: url ?? current.url, hmacKey: key };
      if (stored === undefined) throw invalid(`${ATTRIBUTES}/hmac-key`, "The stored HMAC key cannot be opened with the current keyring; send hmac-key with the new URL");
      return { organization: current.organization, url: url ?? current.url, hmacKey: stored };
    },
  };
}
