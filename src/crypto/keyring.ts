import { createCipheriv, createDecipheriv, hkdfSync } from "node:crypto";
import * as z from "zod";
import { randomBytes } from "./random.js";

/**
 * Secrets at rest (decision D11): AES-256-GCM with a random 96-bit nonce, the key id inside the
 * stored string, and associated data that binds the ciphertext to its row (`table|column|id`), so a
 * value copied into another row fails to decrypt. Several keys may be held; one is active.
 */
export interface KeyringKey {
  id: string;
  /** 32 bytes, raw or base64. */
  key: Uint8Array | string;
}

export interface KeyringOptions {
  keys: readonly KeyringKey[];
  /** Id of the key new values are sealed with; defaults to the first key. */
  active?: string;
  /**
   * Where the keys are read again (decision D29): a keyring file, a secret manager.
   * `runplane.keyring.reload()` calls it, and so does runplane itself, once, when a stored value
   * names a key id this keyring does not hold (another host rotated first). Its result's own
   * `source` is ignored. A failure is reported by its error's name only, since a message may quote
   * what the source read (a key); an error named `"KeyringSourceError"` vouches that its message
   * quotes no key material, and is reported whole.
   */
  source?: KeyringSource;
}

/** The name of a keyring source's error whose message may be shown (see `KeyringOptions.source`). */
export const KEYRING_SOURCE_ERROR = "KeyringSourceError";

/** Reads a keyring's keys again (see `KeyringOptions.source`). */
export type KeyringSource = () => KeyringOptions | Promise<KeyringOptions>;

export interface Keyring {
  /** Id of the key new values are sealed with; changes when the keys are replaced. */
  readonly activeKeyId: string;
  /** Ids of the keys held, in the order given. */
  readonly keyIds: readonly string[];
  /** What `reload` reads (`KeyringOptions.source`), if anything. */
  readonly source: KeyringSource | undefined;
  seal(plaintext: string, associatedData: string): string;
  open(sealed: string, associatedData: string): string;
  /** Key id a sealed value was written with, or null when it is not a sealed value. */
  keyIdOf(sealed: string): string | null;
  /**
   * Holds `options`' keys from now on, all at once (decision D29: rotation without a restart).
   * Throws, keeping the current keys, when they are not a valid keyring. The source stays.
   */
  replace(options: KeyringOptions): void;
  /**
   * MAC keys for `purpose` (decision D32), derived with HKDF-SHA256 from the keys held, so every
   * host sharing the keyring derives the same ones: `active` signs, `all` (active first) verify.
   * Optional for a host's own Keyring; without it runplane offers no capability URLs.
   */
  macKeys?(purpose: string): { active: Uint8Array; all: Uint8Array[] };
}

const PREFIX = "rpv1";
export const KEY_ID = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "key ids are 1-64 of [A-Za-z0-9_-]");

const KEY_FIX = "make one with `npx runplane keygen` or `generateKey()` from \"runplane\"";
// Node decodes both alphabets under "base64"; a 32-byte key is 43 characters and one "=".
const BASE64_32 = /^[A-Za-z0-9+/_-]{43}=?$/;

/** What is wrong with a key, said without echoing it (it is a secret), or null when it is usable. */
export function keyProblem(key: unknown): string | null {
  if (key instanceof Uint8Array) return key.length === 32 ? null : `must be 32 bytes; got ${key.length} bytes`;
  if (typeof key !== "string") return `must be 32 bytes of base64; got ${key === undefined ? "undefined (is the environment variable set?)" : typeof key}`;
  if (key.trim() === "") return "must be 32 bytes of base64; got an empty string (is the environment variable set?)";
  if (/^[0-9a-fA-F]{64}$/.test(key)) return "must be base64; got 64 hex characters (convert with `Buffer.from(hex, \"hex\").toString(\"base64\")`)";
  if (!BASE64_32.test(key.trim())) return `must be 32 bytes of base64 (44 characters); got ${key.length} characters that are not`;
  return null;
}

function toKeyBytes(id: string, key: Uint8Array | string): Buffer {
  const problem = keyProblem(key);
  if (problem) throw new TypeError(`keyring key "${id}" ${problem}: ${KEY_FIX}`);
  return typeof key === "string" ? Buffer.from(key.trim(), "base64") : Buffer.from(key);
}

/**
 * A value that fails authentication: say which key and why that usually happens, never the value.
 * `cause` keeps node's own error for whoever debugs further.
 */
function openFailure(keyId: string, cause: unknown): Error {
  return new Error(
    `cannot decrypt a value sealed with keyring key "${keyId}": the key configured under that id is not the one it was sealed with ` +
      "(was RUNPLANE_KEY or the keyring file replaced? keep old keys in `keys` and rotate with `active`), or the value was copied from another row",
    { cause },
  );
}

/** The keys of `options`, checked; the active one is also under `activeKeyId`. */
function keySet(options: KeyringOptions): { keys: Map<string, Buffer>; activeKeyId: string; active: Buffer } {
  if (options.keys.length === 0) throw new Error("keyring needs at least one key");
  const keys = new Map<string, Buffer>();
  for (const k of options.keys) {
    if (!KEY_ID.safeParse(k.id).success) throw new TypeError(`keyring key id ${JSON.stringify(k.id)} must be 1-64 of [A-Za-z0-9_-]`);
    if (keys.has(k.id)) throw new Error(`duplicate keyring key id ${k.id}`);
    keys.set(k.id, toKeyBytes(k.id, k.key));
  }
  const activeKeyId = options.active ?? options.keys[0]!.id;
  const active = keys.get(activeKeyId);
  if (!active) throw new Error(`active key ${activeKeyId} is not in the keyring`);
  return { keys, activeKeyId, active };
}

export function createKeyring(options: KeyringOptions): Keyring {
  // One object swapped whole by replace(), so a seal never mixes one set's id with another's key.
  let set = keySet(options);
  let keyIds = Object.freeze([...set.keys.keys()]);

  return {
    get activeKeyId() {
      return set.activeKeyId;
    },
    get keyIds() {
      return keyIds;
    },
    source: options.source,
    seal(plaintext, associatedData) {
      const { active, activeKeyId } = set;
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", active, nonce);
      cipher.setAAD(Buffer.from(associatedData, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${PREFIX}:${activeKeyId}:${nonce.toString("base64url")}:${body.toString("base64url")}`;
    },
    open(sealed, associatedData) {
      const parts = sealed.split(":");
      if (parts.length !== 4 || parts[0] !== PREFIX) throw new Error("not a sealed value");
      const key = set.keys.get(parts[1]!);
      if (!key) throw new Error(`cannot decrypt a value sealed with keyring key "${parts[1]}": the keyring has no key with that id (add it back to \`keys\`)`);
      const body = Buffer.from(parts[3]!, "base64url");
      if (body.length < 16) throw new Error("sealed value too short");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(parts[2]!, "base64url"));
      decipher.setAAD(Buffer.from(associatedData, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - 16));
      try {
        return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString("utf8");
      } catch (error) {
        throw openFailure(parts[1]!, error);
      }
    },
    keyIdOf(sealed) {
      // Every claimed row's 1.4 KB payload passes here (D29): found by index, not split into copies.
      const head = PREFIX.length + 1;
      if (!sealed.startsWith(`${PREFIX}:`)) return null;
      const end = sealed.indexOf(":", head);
      const third = end < 0 ? -1 : sealed.indexOf(":", end + 1);
      return third < 0 || sealed.includes(":", third + 1) ? null : sealed.slice(head, end);
    },
    macKeys(purpose) {
      const { keys, activeKeyId } = set;
      const derive = (key: Buffer) => new Uint8Array(hkdfSync("sha256", key, "runplane", `runplane mac ${purpose}`, 32));
      const active = derive(keys.get(activeKeyId)!);
      return { active, all: [active, ...[...keys].filter(([id]) => id !== activeKeyId).map(([, key]) => derive(key))] };
    },
    replace(next) {
      set = keySet(next);
      keyIds = Object.freeze([...set.keys.keys()]);
    },
  };
}

/** Characters of a sealed value that always hold its key id (`rpv1:` and 64 + 1 at most). */
export const SEALED_HEAD_LENGTH = PREFIX.length + 66;

/** The key id at the start of a sealed value, or of its first SEALED_HEAD_LENGTH characters; null when it is none. */
export function keyIdOfHead(head: string): string | null {
  const match = /^rpv1:([A-Za-z0-9_-]{1,64}):/.exec(head);
  return match ? match[1]! : null;
}

/** A fresh random 32-byte key, base64: for hosts generating their first key. */
export function generateKey(): string {
  return randomBytes(32).toString("base64");
}

/** Associated data for a sealed column of a row (D11). */
export const rowBinding = (table: string, column: string, id: string): string => `${table}|${column}|${id}`;
