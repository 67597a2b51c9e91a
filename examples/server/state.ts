import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createKeyring, generateKey, type KeyringOptions } from "../../src/index.js";

/**
 * The reference server keeps small files next to its database: the keyring (mode 0600; the one
 * secret that makes the database's sealed values readable), the id of the owners token it printed
 * last, so a restart can revoke it, and the HMAC key shared by the demo run tasks and the bundled
 * example integration (mode 0600, never printed).
 *
 * Several hosts may share one DATA_DIR (one machine, or a shared volume): a secret file is created
 * whole under a temporary name and linked into place, so of hosts starting together exactly one
 * creates it and every host reads the same key. `RUNPLANE_KEYRING` (the keyring file's JSON) and
 * `INTEGRATION_HMAC_KEY` take precedence over the files, for hosts that share no disk.
 *
 * The directory is 0700 and every file in it 0600 (the database holds token digests,
 * the keyring opens its sealed values). A directory or files left looser by an older version or by
 * hand are tightened here, at every start.
 */
export function openDataDir(dir: string, env: NodeJS.ProcessEnv = process.env) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  tighten(dir);
  const keyringFile = join(dir, "keyring.json");
  const stateFile = join(dir, "server-state.json");
  const hmacKeyFile = join(dir, "integration-hmac-key");

  return {
    database: join(dir, "runplane.db"),
    keyring(): KeyringOptions {
      const fromEnv = env.RUNPLANE_KEYRING?.trim();
      if (fromEnv) return parseKeyring(fromEnv, "RUNPLANE_KEYRING");
      createOnce(keyringFile, () => JSON.stringify({ keys: [{ id: "k1", key: generateKey() }], active: "k1" }));
      return parseKeyring(readFileSync(keyringFile, "utf8"), keyringFile);
    },
    /** The demo integration's HMAC key: generated on first start, then read back. */
    integrationHmacKey(): string {
      const fromEnv = env.INTEGRATION_HMAC_KEY?.trim();
      if (fromEnv) return fromEnv;
      createOnce(hmacKeyFile, () => randomBytes(32).toString("hex"));
      return readFileSync(hmacKeyFile, "utf8").trim();
    },
    lastTokenId(): string | null {
      if (!existsSync(stateFile)) return null;
      return (JSON.parse(readFileSync(stateFile, "utf8")) as { tokenId?: string }).tokenId ?? null;
    },
    rememberTokenId(id: string): void {
      writeFileSync(stateFile, JSON.stringify({ tokenId: id }), { mode: 0o600 });
      chmodSync(stateFile, 0o600);
    },
    /** A start with ADMIN_TOKEN printed nothing: no token of this directory's to revoke next. */
    forgetTokenId(): void {
      rmSync(stateFile, { force: true });
    },
  };
}

export type DataDir = ReturnType<typeof openDataDir>;

/** The directory to 0700, each regular file directly in it to 0600 (symbolic links are left alone). */
function tighten(dir: string): void {
  chmodSync(dir, 0o700);
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    const stat = lstatSync(file);
    if (stat.isFile() && (stat.mode & 0o777) !== 0o600) chmodSync(file, 0o600);
  }
}

/**
 * Creates `file` (mode 0600) with `content()` unless it exists. The content is written to a
 * private temporary file first and hard-linked into place, which fails when `file` appeared
 * meanwhile: a reader never sees a half-written file, and racing hosts keep the first one's.
 */
function createOnce(file: string, content: () => string): void {
  if (!existsSync(file)) {
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(temporary, content(), { mode: 0o600, flag: "wx" });
    try {
      linkSync(temporary, file);
    } catch (error) {
      if ((error as { code?: unknown }).code !== "EEXIST") throw error;
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  chmodSync(file, 0o600);
}

/** The keyring in `text` (RUNPLANE_KEYRING or keyring.json), checked; errors start with `source`. */
/** ` (line 2, column 12)` from the position V8 gives (or the end, for a text cut short); else "". */
function whereJsonFailed(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  const at = /at position (\d+)/.exec(message)?.[1];
  const position = at !== undefined ? Number(at) : /^Unexpected end of JSON input/.test(message) ? text.length : null;
  if (position === null) return "";
  const before = text.slice(0, position);
  const line = before.split("\n").length;
  return ` (line ${line}, column ${position - before.lastIndexOf("\n")})`;
}

export function parseKeyring(text: string, source: string): KeyringOptions {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Never JSON.parse's message: Node's can quote the text around the fault, a key among it.
    throw new Error(`${source} is not valid JSON${whereJsonFailed(text, error)}: it must be JSON like {"keys":[{"id":"k1","key":"<32 bytes, base64>"}],"active":"k1"}`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error(`${source} must hold a non-empty "keys" array`);
  // Checked here, so a bad key is reported with the file or variable that holds it.
  try {
    createKeyring(parsed as KeyringOptions);
  } catch (error) {
    const reason = error instanceof Error && error.name !== "ZodError" ? error.message : "key ids are 1-64 of [A-Za-z0-9_-]";
    throw new Error(`${source}: ${reason}`);
  }
  return parsed as KeyringOptions;
}
