import { readFileSync, renameSync, unwatchFile, watchFile, writeFileSync, type Stats } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { KEYRING_SOURCE_ERROR } from "../../src/crypto/keyring.js";
import type { KeyringOptions, Runplane } from "../../src/index.js";
import { parseKeyring } from "./state.js";

/**
 * Where the reference server reads its keyring (decision D29): RUNPLANE_KEYRING when set (read
 * once: an environment cannot change under a running process), else DATA_DIR/keyring.json, read
 * again by every reload.
 */
export function keyringFileOf(dataDir: string, env: NodeJS.ProcessEnv): string | null {
  return env.RUNPLANE_KEYRING?.trim() ? null : join(dataDir, "keyring.json");
}

/** The keyring options the server passes to createRunplane: `initial`, and `source` re-reading `file`. */
export function reloadableKeyring(initial: KeyringOptions, file: string | null): KeyringOptions {
  return file ? { ...initial, source: () => readKeyringFile(file) } : initial;
}

/**
 * parseKeyring's and the file system's messages name the file, the fault and where, never a key:
 * named KEYRING_SOURCE_ERROR, a reload reports them whole (`... is not valid JSON (line 2, column 12)`).
 */
function readKeyringFile(file: string): KeyringOptions {
  try {
    return parseKeyring(readFileSync(file, "utf8"), file);
  } catch (error) {
    const reported = new Error(error instanceof Error ? error.message : String(error));
    reported.name = KEYRING_SOURCE_ERROR;
    throw reported;
  }
}

const changed = (now: Stats, before: Stats): boolean => now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size;

/**
 * Reloads the keyring without a restart (decision D29): on SIGHUP, and when keyring.json changes.
 * The file is polled (every `intervalMs`), not watched by inode, so a file replaced by a rename
 * (editors, `mv`) or a Kubernetes secret's symlink swap is still seen. A reload that fails (a
 * half-written or invalid file, a key dropped while it still seals values) is reported and the
 * current keys stay. `report` gets one line per reload. Returns a function that stops watching.
 */
export function watchKeyring(runplane: Runplane, file: string | null, report: (line: string) => void, intervalMs = 1_000): () => void {
  const reload = (trigger: string): void =>
    void runplane.keyring.reload().then(
      (r) => report(`keyring ${r.changed ? "reloaded" : "unchanged"} (${trigger}): keys ${r.keyIds.join(", ")}, active ${r.activeKeyId}`),
      (error: unknown) => report(`keyring not reloaded (${trigger}): ${error instanceof Error ? error.message : "unknown error"}`),
    );
  const onHangup = (): void => reload("SIGHUP");
  const onChange = (now: Stats, before: Stats): void => {
    if (changed(now, before) && now.nlink > 0) reload(`${file} changed`);
  };
  process.on("SIGHUP", onHangup);
  if (file) watchFile(file, { interval: intervalMs, persistent: false }, onChange);
  return () => {
    process.off("SIGHUP", onHangup);
    if (file) unwatchFile(file, onChange);
  };
}

/**
 * `runplane reencrypt --retire <id>`: keyring.json without key `id`, written whole (a temporary
 * file renamed over it, mode 0600), so a host reloading meanwhile reads the old or the new file.
 */
export function removeKeyFromFile(file: string, id: string): void {
  const keyring = parseKeyring(readFileSync(file, "utf8"), file);
  const next = { ...keyring, keys: keyring.keys.filter((k) => k.id !== id) };
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(next)}\n`, { mode: 0o600, flag: "wx" });
  renameSync(temporary, file);
}
