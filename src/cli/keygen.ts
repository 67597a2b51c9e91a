import { generateKey } from "../crypto/keyring.js";
import { parse } from "./args.js";

/**
 * `runplane keygen`: a new 32-byte keyring key (base64). With `--json` a whole keyring (the
 * keyring.json / RUNPLANE_KEYRING form) whose one key has id `--id` (default k1).
 */
export function keygen(args: string[], out: (line: string) => void): void {
  const { values } = parse(args, { json: { type: "boolean" }, id: { type: "string" } }, false);
  const key = generateKey();
  const id = typeof values.id === "string" ? values.id : "k1";
  out(values.json ? JSON.stringify({ keys: [{ id, key }], active: id }) : key);
}
