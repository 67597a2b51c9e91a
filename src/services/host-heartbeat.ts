import { hostname } from "node:os";
import type { Keyring } from "../crypto/keyring.js";
import { newId } from "../crypto/random.js";
import type { Logger } from "../logger.js";
import type { HostRecord } from "../schemas/hosts.js";
import type { Storage } from "../storage/types.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";

/** Options of a runplane's host record (`createRunplane({ host })`, decision D29a). */
export interface HostOptions {
  /** The name recorded for this host (`doctor`, `reencrypt --retire` show it). Default: the machine's host name. */
  name?: string;
  /** How often the host records that it is alive, in ms. Default 15 s; it counts as live for 3 of these. */
  intervalMs?: number;
  /**
   * Calls `beat` every `intervalMs` until the returned function is called. Default: an unref'd
   * `setInterval`, so the heartbeat never keeps a process alive. Tests pass their own.
   */
  schedule?: (intervalMs: number, beat: () => void) => () => void;
}

export const DEFAULT_HOST_INTERVAL_MS = 15_000;
/** A host silent this long is removed at the next start of any host: it is long gone. */
export const HOST_RETENTION_MS = 24 * 3_600_000;

export interface HostHeartbeat {
  readonly id: string;
  /** Records this host now (its keys as the keyring holds them). Beats of one host never overlap. */
  beat(): Promise<void>;
  /**
   * Before the keyring makes `nextActive` its active key: records both keys as ones this host
   * seals with, so no retirement of either can slip between the switch and the next beat. Rejects
   * when that could not be recorded (the switch must not happen then).
   */
  beforeSwitch(nextActive: string): Promise<void>;
  /** After a reload: records the new keys at once. */
  afterReload(): Promise<void>;
  /** decision D40: calls `listener` after each scheduled beat that was written. */
  onBeat(listener: () => void): void;
  /** Stops beating and removes this host's record (a clean stop). */
  stop(): Promise<void>;
  /**
   * Null when the last beat was written; else beats again and says why that one could not be
   * written either (`database is read-only`, ...): the one write every host makes, so health can
   * tell a storage that reads but refuses writes, and sees it cured at once.
   */
  writeCheck(): Promise<string | null>;
}

const defaultSchedule = (intervalMs: number, beat: () => void): (() => void) => {
  const timer = setInterval(beat, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
};

export interface HeartbeatDeps {
  storage: Storage;
  keyring: Keyring;
  logger: Logger;
  now: () => Date;
}

/**
 * Decision D29a: this runplane instance's record in `storage.hosts`, written at start, every
 * `intervalMs`, and around every keyring reload; removed by `stop`. Off the request path: nothing
 * a request does waits for it.
 */
export function createHostHeartbeat(deps: HeartbeatDeps, options: HostOptions = {}): HostHeartbeat {
  const { storage, keyring, logger, now } = deps;
  const intervalMs = options.intervalMs ?? DEFAULT_HOST_INTERVAL_MS;
  const id = newId("host");
  const name = options.name ?? hostname();
  const startedAt = now().toISOString();
  let chain: Promise<unknown> = Promise.resolve();
  let stopped = false;
  let switchingTo: string | null = null;

  const sealingKeyIds = (): string[] => [...new Set([keyring.activeKeyId, ...(switchingTo ? [switchingTo] : [])])];
  const record = (): HostRecord => {
    const at = now();
    const common = { id, name, pid: process.pid, intervalMs, startedAt };
    return { ...common, activeKeyId: keyring.activeKeyId, keyIds: [...keyring.keyIds], sealingKeyIds: sealingKeyIds(), lastSeenAt: at.toISOString() };
  };
  // One write at a time, each reading the keys when it runs: a later beat never lands before an earlier one.
  let failure: string | null = null;
  const write = (): Promise<void> => {
    const next = chain.then(async () => {
      if (stopped) return;
      try {
        await storage.hosts.beat(record());
        failure = null;
      } catch (error) {
        failure = isStorageUnavailableError(error) ? error.reason : error instanceof Error ? error.name : "write failed";
        throw error;
      }
    });
    chain = next.catch(() => undefined);
    return next;
  };
  const logged = (): Promise<void> =>
    write().catch((error: unknown) => logger.warn("host heartbeat failed", { reason: error instanceof Error ? error.message : String(error) }));

  const beaten: (() => void)[] = [];
  const cancel = (options.schedule ?? defaultSchedule)(intervalMs, () => void write().then(() => beaten.forEach((listener) => listener()), (error: unknown) => logger.warn("host heartbeat failed", { reason: error instanceof Error ? error.message : String(error) })));
  void storage.hosts
    .prune(new Date(now().getTime() - HOST_RETENTION_MS).toISOString())
    .catch(() => undefined);
  void logged();

  return {
    id,
    async writeCheck() {
      if (failure === null) return null;
      await write().catch(() => undefined);
      return failure;
    },
    beat: logged,
    onBeat: (listener) => void beaten.push(listener),
    async beforeSwitch(nextActive) {
      switchingTo = nextActive;
      try {
        await write();
      } catch (error) {
        switchingTo = null;
        throw new Error(`could not record in storage that this host switches to ${nextActive} (${error instanceof Error ? error.message : String(error)})`);
      }
    },
    async afterReload() {
      switchingTo = null;
      await logged();
    },
    async stop() {
      if (stopped) return;
      // A beat already writing finishes first; one queued behind it writes nothing, so no beat
      // lands after the removal and records the host again.
      stopped = true;
      cancel();
      await chain;
      await storage.hosts.remove(id).catch((error: unknown) => logger.warn("host record not removed", { reason: error instanceof Error ? error.message : String(error) }));
    },
  };
}
