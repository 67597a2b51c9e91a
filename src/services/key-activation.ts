import type { Keyring } from "../crypto/keyring.js";
import { describeHost, hostsLacking, isLive } from "../domain/hosts.js";
import type { Storage } from "../storage/types.js";

/** decision D40: a key a reload would make active, held but not sealed with while live hosts lack it. */
export interface PendingActivation {
  activeKeyId: string;
  /** The live hosts that lack it, as operators read them (`web-2 pid 4242 (host-...), last seen 5 s ago`). */
  lacking: string[];
}

/**
 * decision D40: the live hosts other than `selfId` whose keyring lacks `keyId`, described. Empty
 * when every live host holds it: then it may be sealed with, since each of them can open it.
 */
export async function hostsLackingKey(storage: Storage, keyId: string, selfId: string, now: Date): Promise<string[]> {
  const hosts = await storage.hosts.list();
  return hostsLacking(hosts, keyId, now)
    .filter((h) => h.id !== selfId)
    .map((h) => describeHost(h, now));
}

/**
 * decision D40: the key to make active now: `wanted`'s, or the current one (with the activation
 * pending) while live hosts other than `selfId` lack it. Throws, naming them, when `wanted` also
 * drops the current key, so it cannot wait. Without a host record (`host: false`) there is no one
 * to wait for.
 */
export async function activationOf(current: Keyring, wanted: Keyring, storage: Storage, selfId: string | undefined, now: Date): Promise<{ active: string; pending?: PendingActivation }> {
  if (selfId === undefined || wanted.activeKeyId === current.activeKeyId) return { active: wanted.activeKeyId };
  const lacking = await hostsLackingKey(storage, wanted.activeKeyId, selfId, now);
  if (lacking.length === 0) return { active: wanted.activeKeyId };
  if (!wanted.keyIds.includes(current.activeKeyId)) {
    throw new Error(`${lacking.join("; ")} lacks ${wanted.activeKeyId}: keeping the current keys; add ${wanted.activeKeyId} to every host's keyring first, then make it active`);
  }
  return { active: current.activeKeyId, pending: { activeKeyId: wanted.activeKeyId, lacking } };
}

/**
 * decision D40 (at start): the key a host starting with `keyring` should seal with. Its active key
 * when no other live host lacks it; else a key it holds that every other live host holds (the one
 * they seal with, if any), the active key then pending; else (no key in common) the active key,
 * with `lacking` set so the host warns: refusing the start would leave no way to replace every host.
 */
export async function startingKeyOf(keyring: Pick<Keyring, "activeKeyId" | "keyIds">, storage: Storage, selfId: string, now: Date): Promise<{ active: string; pending?: PendingActivation; lacking?: string[] }> {
  const others = (await storage.hosts.list()).filter((h) => h.id !== selfId);
  const wanted = keyring.activeKeyId;
  const lacking = hostsLacking(others, wanted, now).map((h) => describeHost(h, now));
  if (lacking.length === 0) return { active: wanted };
  const common = keyring.keyIds.filter((id) => id !== wanted && hostsLacking(others, id, now).length === 0);
  const sealedByOthers = new Set(others.filter((h) => isLive(h, now)).map((h) => h.activeKeyId));
  const active = common.find((id) => sealedByOthers.has(id)) ?? common[0];
  return active === undefined ? { active: wanted, lacking } : { active, pending: { activeKeyId: wanted, lacking } };
}
