import { generateKey } from "../crypto/keyring.js";
import { parse } from "./args.js";

/**
 * `runplane keygen`: a new 32-byte keyring key (base64, for RUNPLANE_KEY). With `--id` alone the
 * keyring entry `{"id","key"}` to add to `keys` (the key rotation guide's first step); with
 * `--json` a whole keyring (the keyring.json / RUNPLANE_KEYRING form) whose one key has id `--id`
 * (default k1) and is active.
 */
export function keygen(args: string[], out: (line: string) => void): void {
  const { values } = parse(args, { json: { type: "boolean" }, id: { type: "string" } }, false);
  const key = generateKey();
  const id = typeof values.id === "string" ? values.id : "k1";
  if (values.json) out(JSON.stringify({ keys: [{ id, key }], active: id }));
  else if (typeof values.id === "string") out(JSON.stringify({ id, key }));
  else out(key);
}
