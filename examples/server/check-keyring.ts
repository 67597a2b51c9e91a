import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createKeyring } from "../../src/index.js";
import { inspectSealedValues } from "../../src/services/sealed-values.js";
import { inspectDatabase } from "./check-storage.js";
import type { CheckInput, Verdict } from "./check-types.js";
import { parseKeyring } from "./state.js";

/**
 * The keyring `serve` would use (RUNPLANE_KEYRING, else keyring.json in DATA_DIR) must be valid and
 * open the values the database already holds (D11, D29): a replaced key would otherwise start a
 * server that cannot read its sensitive variables or sign its run task requests.
 */
export async function keyringCheck({ env, config, problems }: CheckInput): Promise<Verdict> {
  const fromEnv = env.RUNPLANE_KEYRING?.trim();
  const file = join(config.dataDir, "keyring.json");
  const source = fromEnv ? "RUNPLANE_KEYRING" : file;
  if (!fromEnv && !existsSync(file)) return { note: "no keyring yet (the first start creates one)" };
  let keyring;
  let options;
  try {
    // The same parse `serve` reads its keyring with: its errors name the source and how to make a key.
    options = parseKeyring(fromEnv || readFileSync(file, "utf8"), source);
    keyring = createKeyring(options);
  } catch (error) {
    return { fix: error instanceof Error ? error.message : String(error) };
  }
  const described = `${source}, ${options.keys.length} key(s), active ${keyring.activeKeyId}`;
  if (problems.some((p) => p.variable === "DATABASE_URL" || p.variable === "DATABASE_SCHEMA")) return { note: `${described} (its sealed values not checked: see options)` };
  const sealed = await inspectDatabase(config, async (db) => {
    const storage = await db.storage();
    return storage ? inspectSealedValues(storage, keyring) : null;
  });
  if (sealed === null) return { note: described };
  if (sealed.failure) return { fix: `${source}: ${sealed.failure}` };
  const counts = Object.entries(sealed.byKey).map(([id, n]) => `${id}: ${n}`);
  return { note: `${described}; opens the database's sealed values${counts.length ? ` (by key ${counts.join(", ")})` : " (none yet)"}` };
}
