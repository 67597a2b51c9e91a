import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateKey, type KeyringOptions } from "../../src/index.js";

/**
 * The reference server keeps two small files next to its database: the keyring (mode 0600; the one
 * secret that makes the database's sealed values readable) and the id of the owners token it
 * used last, so a restart can revoke it when it issues or is given another.
 */
export function openDataDir(dir: string) {
  mkdirSync(dir, { recursive: true });
  const keyringFile = join(dir, "keyring.json");
  const stateFile = join(dir, "server-state.json");

  return {
    database: join(dir, "runplane.db"),
    keyring(): KeyringOptions {
      if (!existsSync(keyringFile)) {
        writeFileSync(keyringFile, JSON.stringify({ keys: [{ id: "k1", key: generateKey() }], active: "k1" }), { mode: 0o600 });
      }
      chmodSync(keyringFile, 0o600);
      return JSON.parse(readFileSync(keyringFile, "utf8")) as KeyringOptions;
    },
    lastTokenId(): string | null {
      if (!existsSync(stateFile)) return null;
      return (JSON.parse(readFileSync(stateFile, "utf8")) as { tokenId?: string }).tokenId ?? null;
    },
    rememberTokenId(id: string): void {
      writeFileSync(stateFile, JSON.stringify({ tokenId: id }), { mode: 0o600 });
    },
  };
}
