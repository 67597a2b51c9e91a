import type { KeyringOptions } from "../crypto/keyring.js";

/** What a keyring reload did: the keys held afterwards. */
export interface KeyringReload {
  /** False when the keys read are the ones already held. */
  changed: boolean;
  keyIds: string[];
  activeKeyId: string;
  /**
   * decision D40: the key the keyring makes active, held but not yet sealed with because live
   * hosts lack it (named in `lacking`); this host switches once none does (it tries after each of
   * its beats, and on every reload).
   */
  pending?: { activeKeyId: string; lacking: string[] };
}

/** A runplane's keyring at run time (decision D29); `runplane.keyring`. */
export interface KeyringControl {
  readonly activeKeyId: string;
  readonly keyIds: readonly string[];
  /**
   * Holds `options`' keys, or reads the keyring's `source` again, without a restart. Rejects,
   * keeping the current keys, when they are not a valid keyring, when there is neither, or when
   * they drop a key that still seals a stored value (re-encrypt first: a key is retired only when
   * nothing uses it). Concurrent calls without `options` share one read.
   */
  reload(options?: KeyringOptions): Promise<KeyringReload>;
  /**
   * Before opening `values`: one of them under a key id this keyring does not hold (another host
   * rotated first, this one missed the change) makes it read its source again, once; a failed
   * reload is logged and the open then fails as it would have.
   */
  holdKeysOf(values: Iterable<string | null | undefined>): Promise<void>;
  /**
   * decision D40: resolves once the start check is done: a host started with an active key that
   * live hosts lack seals with a key they all hold until they hold it too. Await it before sealing
   * at start (the reference server does, before its demo tasks); it never rejects.
   */
  ready(): Promise<void>;
}
