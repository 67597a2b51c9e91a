import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describeSealed } from "../../src/services/keyring-control.js";
import { countSealedValues, sealedBy } from "../../src/services/sealing.js";
import { inspectDatabase } from "./check-storage.js";
import type { CheckInput, Verdict } from "./check-types.js";
import { parseKeyring } from "./state.js";

/**
 * What each key of the keyring seals in the database, counted by kind (decision D29): the check
 * an operator reads before removing a key (`ok   keys: k1: 0 values; k2 (active): 12 values
 * (...)`). It fails when a value is sealed with a key the keyring no longer holds: a key removed
 * too early, whose values (a queued delivery's payload among them) nothing can open.
 */
export async function keysCheck({ env, config, problems }: CheckInput): Promise<Verdict> {
  const fromEnv = env.RUNPLANE_KEYRING?.trim();
  const file = join(config.dataDir, "keyring.json");
  const source = fromEnv ? "RUNPLANE_KEYRING" : file;
  if (!fromEnv && !existsSync(file)) return { note: "no keyring yet" };
  let keyring;
  try {
    keyring = parseKeyring(fromEnv || readFileSync(file, "utf8"), source);
  } catch {
    return { skip: "not checked: the keyring is not valid (see keyring)" };
  }
  if (problems.some((p) => p.variable === "DATABASE_URL" || p.variable === "DATABASE_SCHEMA")) return { skip: "not checked: the database settings are not valid (see options)" };
  const counts = await inspectDatabase(config, async (db) => {
    const storage = await db.storage();
    return storage ? countSealedValues(storage) : null;
  });
  if (counts === null) return { note: "the database holds no sealed value yet" };
  const held = keyring.keys.map((k) => k.id);
  const active = keyring.active ?? held[0]!;
  const missing = Object.keys(counts).filter((id) => !held.includes(id));
  if (missing.length > 0) {
    const what = missing.map((id) => `${id} seals ${describeSealed(counts, id)}`).join("; ");
    return { fix: `${what}, but ${source} holds no key ${missing.join(", ")}: put it back (a key leaves the keyring only once it seals nothing: \`runplane reencrypt --retire <key id>\`)` };
  }
  const lines = held.map((id) => {
    const unused = id !== active && sealedBy(counts, [id]) === 0 ? " (unused: may be removed)" : "";
    return `${id}${id === active ? " (active)" : ""}: ${describeSealed(counts, id)}${unused}`;
  });
  return { note: lines.join("; ") };
}
