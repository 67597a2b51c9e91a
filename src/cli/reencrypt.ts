import { keyringFileOf, removeKeyFromFile } from "../../examples/server/keyring-file.js";
import type { Runplane } from "../index.js";
import { describeHost, hostsLacking, hostsSealingWith } from "../domain/hosts.js";
import type { Storage } from "../storage/types.js";
import { describeSealed } from "../services/keyring-control.js";
import { sealedBy, type SealedValueCounts } from "../services/sealing.js";
import { DATA_FLAGS, dataDirOf, parse } from "./args.js";
import { withServerData } from "./open.js";

/**
 * `runplane reencrypt [--retire <key id>]` (decisions D11, D29): moves every sealed value
 * (sensitive variables and parameters, run task HMAC keys, delivery payloads) to the keyring's
 * active key, then prints what each key still seals. `--retire` also checks that the key seals
 * nothing any more and that no live host seals with it (decision D29a: every host records its
 * keys in storage), and only then removes it from keyring.json; it refuses (exit 1, the keyring
 * unchanged) while the key is active here, still seals a value, or is the key a live host seals
 * with (naming each such host), which happens while a host has not yet made the new key active
 * and reloaded. A host that stopped beating long ago (not live) does not block.
 */
export async function reencrypt(args: string[], out: (line: string) => void): Promise<boolean> {
  const { env, values } = parse(args, { retire: { type: "string" } }, DATA_FLAGS);
  const retire = typeof values.retire === "string" ? values.retire : undefined;
  return withServerData(env, async (runplane, store) => {
    const { activeKeyId, keyIds } = runplane.keyring;
    if (retire === activeKeyId) throw new Error(`--retire ${retire}: it is the active key; make another key active on every host first`);
    if (retire !== undefined && !keyIds.includes(retire)) throw new Error(`--retire ${retire}: the keyring holds no such key (it holds ${keyIds.join(", ")})`);
    // D29a: values moved to a key some live hosts lack would become unreadable there, so refuse.
    const now = new Date();
    const lacking = hostsLacking(await store.storage.hosts.list(), activeKeyId, now);
    if (lacking.length > 0) {
      throw new Error(
        `not re-encrypted: ${lacking.length === 1 ? "a live host does" : `${lacking.length} live hosts do`} not hold the active key ${activeKeyId}, so they could not open what it seals: ` +
          `${lacking.map((h) => describeHost(h, now)).join("; ")}. Add ${activeKeyId} to every host's keyring, let them reload, and run this again`,
      );
    }
    const count = await runplane.reencrypt();
    out(`re-encrypted ${count} value${count === 1 ? "" : "s"} with the active key ${activeKeyId}`);
    const counts = await runplane.sealedValues();
    for (const line of keyLines(runplane, counts)) out(line);
    return retire === undefined ? true : retireKey(retire, counts, store.storage, env, out);
  }, { keyringMustOpen: true });
}

/** One line per key held or found in storage: `  k1: 0 values` / `  k2 (active): 3 values (...)`. */
export function keyLines(runplane: Pick<Runplane, "keyring">, counts: SealedValueCounts): string[] {
  const { activeKeyId, keyIds } = runplane.keyring;
  const ids = [...new Set([...keyIds, ...Object.keys(counts)])];
  return ids.map((id) => {
    const role = id === activeKeyId ? " (active)" : keyIds.includes(id) ? "" : " (NOT IN THE KEYRING)";
    return `  ${id}${role}: ${describeSealed(counts, id)}`;
  });
}

async function retireKey(id: string, counts: SealedValueCounts, storage: Storage, env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<boolean> {
  const refusals: string[] = [];
  if (sealedBy(counts, [id]) > 0) {
    refusals.push(`not retired: ${id} still seals ${describeSealed(counts, id)}, sealed by a host that does not seal with the new key yet: make it active in every host's keyring, let them reload, and run this again`);
  }
  // Read last, nearest the removal: a host that makes the key active again records that first.
  const now = new Date();
  const sealing = hostsSealingWith(await storage.hosts.list(), id, now);
  if (sealing.length > 0) {
    const who = sealing.map((h) => `${describeHost(h, now)}, ${h.activeKeyId === id ? "active" : `making it active (now ${h.activeKeyId})`}`).join("; ");
    refusals.push(`not retired: ${id} is the key ${sealing.length === 1 ? "a live host seals" : `${sealing.length} live hosts seal`} with: ${who}. Make another key active in their keyring and let them reload (or stop them), then run this again`);
  }
  if (refusals.length > 0) {
    for (const line of refusals) out(line);
    return false;
  }
  const file = keyringFileOf(dataDirOf(env), env);
  if (!file) {
    out(`${id} seals nothing: remove it from RUNPLANE_KEYRING on every host`);
    return true;
  }
  removeKeyFromFile(file, id);
  out(`retired ${id}: removed from ${file}; remove it from every other host's keyring too`);
  return true;
}
