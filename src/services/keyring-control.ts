import { createKeyring, KEYRING_SOURCE_ERROR, type Keyring, type KeyringOptions } from "../crypto/keyring.js";
import { recordInEveryOrganization } from "./audit.js";
import type { Logger } from "../logger.js";
import type { HostHeartbeat } from "./host-heartbeat.js";
import type { SealedColumn } from "../storage/sealed-values.js";
import type { Storage } from "../storage/types.js";
import { countSealedValues, sealedBy, type SealedValueCounts } from "./sealing.js";
import type { KeyringControl, KeyringReload } from "./keyring-reload.js";
import { activationOf, startingKeyOf } from "./key-activation.js";
import { counted } from "../domain/words.js";


export type { KeyringControl, KeyringReload } from "./keyring-reload.js";

const KIND_WORDS: Record<SealedColumn, string> = {
  "vars.value": "variable value",
  "tasks.hmac_key": "run task HMAC key",
  "task_deliveries.payload": "delivery payload",
};

/** `3 values (1 variable value, 2 delivery payloads)` for the kinds of `counts[keyId]`. */
export function describeSealed(counts: SealedValueCounts, keyId: string): string {
  const kinds = Object.entries(counts[keyId] ?? {}) as [SealedColumn, number][];
  const total = kinds.reduce((sum, [, n]) => sum + n, 0);
  const detail = kinds.map(([kind, n]) => counted(n, KIND_WORDS[kind])).join(", ");
  return `${counted(total, "value")}${detail ? ` (${detail})` : ""}`;
}

/** `work`, its failure logged as a warning (and handled: an activation tried after a beat has no caller). */
function logged<T>(work: Promise<T>, logger: Logger): Promise<T> {
  work.catch((error: unknown) => logger.warn("keyring activation failed", { reason: error instanceof Error ? error.message : String(error) }));
  return work;
}

/** Throws, naming what they seal, when `next` drops keys that still seal stored values (D29). */
async function refuseDroppingUsed(keyring: Keyring, next: Keyring, storage: Storage): Promise<void> {
  const dropped = keyring.keyIds.filter((id) => !next.keyIds.includes(id));
  if (dropped.length === 0) return;
  const counts = await countSealedValues(storage);
  const inUse = dropped.filter((id) => sealedBy(counts, [id]) > 0);
  if (inUse.length === 0) return;
  const what = inUse.map((id) => `${id} still seals ${describeSealed(counts, id)}`).join("; ");
  throw new Error(`the new keyring drops a key in use (${what}): keeping the current keys; run \`runplane reencrypt\` with ${next.activeKeyId} active on every host, then remove the key`);
}

const sameKeys = (keyring: Keyring, next: Keyring): boolean =>
  keyring.activeKeyId === next.activeKeyId && keyring.keyIds.join() === next.keyIds.join();

/**
 * `host` (decision D29a) hears every change of keys: before the active key switches it records
 * both keys as ones this host seals with (a failure refuses the reload), after it the new keys.
 * decision D40: a new active key is sealed with only once no other live host lacks it. Until
 * then the reload holds the new keys but keeps the current active key (phase one) and says which
 * hosts lack it; each later beat of this host, and each reload, tries the switch again (phase
 * two), so hosts reloading one shared keyring file converge. A keyring that would also drop the
 * current active key cannot wait so: it is refused, naming the hosts.
 */
export function createKeyringControl(
  keyring: Keyring,
  storage: Storage,
  logger: Logger,
  host?: Pick<HostHeartbeat, "id" | "beforeSwitch" | "afterReload" | "onBeat">,
  now: () => Date = () => new Date(),
  started?: KeyringOptions,
): KeyringControl {
  let reading: Promise<KeyringReload> | null = null;
  /** decision D40: the keyring whose activation waits for other hosts, retried on each beat. */
  let waiting: KeyringOptions | null = null;

  async function apply(options: KeyringOptions): Promise<KeyringReload> {
    // Checked whole before anything changes (it throws on a bad key, naming the key id only).
    const next = createKeyring({ keys: options.keys, ...(options.active === undefined ? {} : { active: options.active }) });
    // The same ids are the same keys: a key id is never reused for other bytes.
    if (sameKeys(keyring, next)) {
      waiting = null;
      return { changed: false, keyIds: [...next.keyIds], activeKeyId: next.activeKeyId };
    }
    await refuseDroppingUsed(keyring, next, storage);
    const { active, pending } = await activationOf(keyring, next, storage, host?.id, now());
    const previous = keyring.activeKeyId;
    const changed = active !== previous || keyring.keyIds.join() !== next.keyIds.join();
    if (host && active !== previous) {
      await host.beforeSwitch(active).catch((error: unknown) => {
        throw new Error(`${error instanceof Error ? error.message : String(error)}: keeping the current keys`);
      });
    }
    waiting = pending ? options : null;
    if (!changed) return { changed, keyIds: [...keyring.keyIds], activeKeyId: active, ...(pending ? { pending } : {}) };
    keyring.replace({ ...options, active });
    const held = { keyIds: [...keyring.keyIds], activeKeyId: keyring.activeKeyId };
    logger.info("keyring reloaded", { keyIds: held.keyIds.join(","), activeKeyId: held.activeKeyId });
    if (pending) logger.warn("new active key waits for other hosts", { activeKeyId: pending.activeKeyId, lacking: pending.lacking.join("; ") });
    if (held.activeKeyId !== previous) await recordActivation(storage, logger, now, previous, held);
    await host?.afterReload();
    return { changed, ...held, ...(pending ? { pending } : {}) };
  }

  // decision D40: phase two, tried again after each beat of this host while an activation waits.
  host?.onBeat(() => {
    if (waiting !== null && reading === null) reading = logged(apply(waiting).finally(() => (reading = null)), logger);
  });

  const starting: Promise<void> =
    host && started
      ? startCheck({ keyring, storage, logger, now }, started, host)
          .then((waits) => void (waits && (waiting = started)))
          .catch((error: unknown) => logger.warn("keyring start check failed", { reason: error instanceof Error ? error.message : String(error) }))
      : Promise.resolve();

  const fromSource = async (): Promise<KeyringReload> => apply(await optionsFromSource(keyring));

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
    ready: () => starting,
    async holdKeysOf(values) {
      // Without a source there is nothing to read again: no value needs scanning (each claim passes its rows here).
      if (!keyring.source || !holdsUnknownKey(keyring, values)) return;
      try {
        await reload();
      } catch (error) {
        logger.warn("keyring reload failed", { reason: error instanceof Error ? error.message : String(error) });
      }
    },
  };
}

/** decision D53: which key seals from now on is recorded in every organization's trail (key ids only, never a key). */
async function recordActivation(storage: Storage, logger: Logger, now: () => Date, previous: string, held: { keyIds: string[]; activeKeyId: string }): Promise<void> {
  const changes = [{ field: "activeKeyId", old: previous, new: held.activeKeyId }, { field: "keyIds", new: held.keyIds }];
  await recordInEveryOrganization({ storage, now }, { resource: { type: "keyring", id: held.activeKeyId }, action: "activate", changes }).catch((error: unknown) =>
    logger.error("keyring activation not recorded in the audit trail", { error: error instanceof Error ? error.name : typeof error }),
  );
}

/** Whether a value among `values` is sealed with a key id this keyring does not hold. */
function holdsUnknownKey(keyring: Keyring, values: Iterable<string | null | undefined>): boolean {
  return [...values].some((v) => {
    const id = v ? keyring.keyIdOf(v) : null;
    return id !== null && !keyring.keyIds.includes(id);
  });
}

/** The keyring its source gives now; a source's failure named without quoting what it read. */
async function optionsFromSource(keyring: Keyring): Promise<KeyringOptions> {
  const { source } = keyring;
  if (!source) throw new Error("the keyring has no source to reload from: pass the keys to reload(options), or give KeyringOptions.source");
  try {
    return await source();
  } catch (error) {
    // Only the name: a source's own message may quote what it read (a key), unless the source
    // vouches for it by naming its error KEYRING_SOURCE_ERROR (KeyringOptions.source).
    if (error instanceof Error && error.name === KEYRING_SOURCE_ERROR) throw new Error(`the keyring source failed: ${error.message}: keeping the current keys`);
    throw new Error(`the keyring source failed (${error instanceof Error ? error.name : typeof error}): keeping the current keys`);
  }
}

/**
 * decision D40: a start is checked like a reload. While live hosts lack the configured active
 * key and this host holds one they all hold, it seals with that one and waits (phase one),
 * switching after a later beat like a waiting reload. Resolves whether the activation waits.
 */
async function startCheck(
  { keyring, storage, logger, now }: { keyring: Keyring; storage: Storage; logger: Logger; now: () => Date },
  options: KeyringOptions,
  self: Pick<HostHeartbeat, "id" | "beforeSwitch" | "afterReload">,
): Promise<boolean> {
  const { active, pending, lacking } = await startingKeyOf(keyring, storage, self.id, now());
  if (lacking) logger.warn("this host seals with a key other live hosts lack", { activeKeyId: active, lacking: lacking.join("; ") });
  if (!pending) return false;
  await self.beforeSwitch(active);
  keyring.replace({ ...options, active });
  await self.afterReload();
  logger.warn("new active key waits for other hosts", { activeKeyId: pending.activeKeyId, lacking: pending.lacking.join("; ") });
  return true;
}
