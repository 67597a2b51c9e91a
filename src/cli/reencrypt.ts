import { parse } from "./args.js";
import { withServerData } from "./open.js";

/**
 * `runplane reencrypt`: moves every sealed value to the keyring's active key (decision D11), after
 * a new key was added to keyring.json (or RUNPLANE_KEYRING) and made active. Old keys stay in the
 * keyring until this has run.
 */
export async function reencrypt(args: string[], out: (line: string) => void): Promise<void> {
  const { env } = parse(args);
  const count = await withServerData(env, (runplane) => runplane.reencrypt());
  out(`re-encrypted ${count} value${count === 1 ? "" : "s"} with the active key`);
}
