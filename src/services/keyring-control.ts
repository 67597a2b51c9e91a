import { createKeyring, KEYRING_SOURCE_ERROR, type Keyring, type KeyringOptions } from "../crypto/keyring.js";
import { recordInEveryOrganization } from "./audit.js";
import type { Logger } from "../logger.js";
import type { HostHeartbeat } from "./host-heartbeat.js";
import type { SealedColumn } from "../storage/sealed-values.js";
import type { Storage } from "../storage/types.js";
import { countSealedValues, sealedBy, type SealedValueCounts } from "./sealing.js";
import type { KeyringControl, KeyringReload } from "./keyring-reload.js";

export type { KeyringControl, KeyringReload } from "./keyring-reload.js";

const KIND_WORDS: Record<SealedColumn, string> = {
  "vars.value": "variable value",
  "tasks.hmac_key": "run task HMAC key",
  "task_deliveries.payload": "delivery payload",
};
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** `3 values (1 variable value, 2 delivery payloads)` for the kinds of `counts[keyId]`. */
export function describeSealed(counts: SealedValueCounts, keyId: string): string {
  const kinds = Object.entries(counts[keyId] ?? {}) as [SealedColumn, number][];
  const total = kinds.reduce((sum, [, n]) => sum + n, 0);
  const detail = kinds.map(([kind, n]) => plural(n, KIND_WORDS[kind])).join(", ");
  return `${plural(total, "value")}${detail ? ` (${detail})` : ""}`;
}

const sameKeys = (keyring: Keyring, next: Keyring): boolean =>
  keyring.activeKeyId === next.activeKeyId && keyring.keyIds.join() === next.keyIds.join();

/**
 * `host` (decision D29a) hears every change of keys: before the active key switches it records
 * both keys as ones this host seals with (a failure refuses the reload), after it the new keys.
 */
export function createKeyringControl(
  keyring: Keyring,
  storage: Storage,
  logger: Logger,
  host?: Pick<HostHeartbeat, "beforeSwitch" | "afterReload">,
): KeyringControl {
  let reading: Promise<KeyringReload> | null = null;

  async function apply(options: KeyringOptions): Promise<KeyringReload> {
    // Checked whole before anything changes (it throws on a bad key, naming the key id only).
    const next = createKeyring({ keys: options.keys, ...(options.active === undefined ? {} : { active: options.active }) });
    const held = { keyIds: [...next.keyIds], activeKeyId: next.activeKeyId };
    // The same ids are the same keys: a key id is never reused for other bytes.
    if (sameKeys(keyring, next)) return { changed: false, ...held };
    const dropped = keyring.keyIds.filter((id) => !next.keyIds.includes(id));
    if (dropped.length > 0) {
      const counts = await countSealedValues(storage);
      const inUse = dropped.filter((id) => sealedBy(counts, [id]) > 0);
      if (inUse.length > 0) {
        const what = inUse.map((id) => `${id} still seals ${describeSealed(counts, id)}`).join("; ");
        throw new Error(`the new keyring drops a key in use (${what}): keeping the current keys; run \`runplane reencrypt\` with ${next.activeKeyId} active on every host, then remove the key`);
      }
    }
    const previous = keyring.activeKeyId;
    if (host && next.activeKeyId !== previous) {
      await host.beforeSwitch(next.activeKeyId).catch((error: unknown) => {
        throw new Error(`${error instanceof Error ? error.message : String(error)}: keeping the current keys`);
      });
    }
    keyring.replace(options);
    logger.info("keyring reloaded", { keyIds: held.keyIds.join(","), activeKeyId: held.activeKeyId });
    // decision D53: which key seals from now on is recorded (key ids only, never a key).
    if (next.activeKeyId !== previous) {
      await recordInEveryOrganization({ storage, now: () => new Date() }, { resource: { type: "keyring", id: next.activeKeyId }, action: "activate", changes: [{ field: "activeKeyId", old: previous, new: next.activeKeyId }, { field: "keyIds", new: held.keyIds }] }).catch((error: unknown) =>
        logger.error("keyring activation not recorded in the audit trail", { error: error instanceof Error ? error.name : typeof error }),
      );
    }
    await host?.afterReload();
    return { changed: true, ...held };
  }

  async function fromSource(): Promise<KeyringReload> {
    const { source } = keyring;
    if (!source) throw new Error("the keyring has no source to reload from: pass the keys to reload(options), or give KeyringOptions.source");
    let options: KeyringOptions;
    try {
      options = await source();
    } catch (error) {
      // Only the name: a source's own message may quote what it read (a key), unless the source
      // vouches for it by naming its error KEYRING_SOURCE_ERROR (KeyringOptions.source).
      if (error instanceof Error && error.name === KEYRING_SOURCE_ERROR) throw new Error(`the keyring source failed: ${error.message}: keeping the current keys`);
      throw new Error(`the keyring source failed (${error instanceof Error ? error.name : typeof error}): keeping the current keys`);
    }
    return apply(options);
  }

  function reload(options?: KeyringOptions): Promise<KeyringReload> {
    if (options) return apply(options);
    reading ??= fromSource().finally(() => (reading = null));
    return reading;
  }

  return {
    get activeKeyId() {
      return keyring.activeKeyId;
    },
    get keyIds() {
      return keyring.keyIds;
    },
    reload,
    async holdKeysOf(values) {
      const unknown = [...values].some((v) => {
        const id = v ? keyring.keyIdOf(v) : null;
        return id !== null && !keyring.keyIds.includes(id);
      });
      if (!unknown || !keyring.source) return;
      try {
        await reload();
      } catch (error) {
        logger.warn("keyring reload failed", { reason: error instanceof Error ? error.message : String(error) });
      }
    },
  };
}
