import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { generateKey, type KeyringOptions } from "../../src/index.js";

/**
 * The reference server keeps small files next to its database: the keyring (mode 0600; the one
 * secret that makes the database's sealed values readable), the id of the owners token it used
 * last, so a restart can revoke it when it issues or is given another, and the HMAC key shared by
 * the demo run tasks and the bundled example integration (mode 0600, never printed).
 */
export function openDataDir(dir: string) {
  mkdirSync(dir, { recursive: true });
  const keyringFile = join(dir, "keyring.json");
  const stateFile = join(dir, "server-state.json");
  const hmacKeyFile = join(dir, "integration-hmac-key");

  return {
    database: join(dir, "runplane.db"),
    keyring(): KeyringOptions {
      if (!existsSync(keyringFile)) {
        writeFileSync(keyringFile, JSON.stringify({ keys: [{ id: "k1", key: generateKey() }], active: "k1" }), { mode: 0o600 });
      }
      chmodSync(keyringFile, 0o600);
      return JSON.parse(readFileSync(keyringFile, "utf8")) as KeyringOptions;
    },
    /** The demo integration's HMAC key: generated on first start, then read back. */
    integrationHmacKey(): string {
      if (!existsSync(hmacKeyFile)) writeFileSync(hmacKeyFile, randomBytes(32).toString("hex"), { mode: 0o600 });
      chmodSync(hmacKeyFile, 0o600);
      return readFileSync(hmacKeyFile, "utf8").trim();
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
