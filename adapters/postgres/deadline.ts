import { connect } from "node:net";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import type { PgPoolClientLike, PgPoolLike } from "./pg-types.js";

/**
 * decision D39: one storage operation's deadline (the wait for a connection and every statement of
 * a transaction, or of one autocommit statement), kept by a single timer: per-statement timers
 * cost CPU on every statement, and separate bounds added up to several times the bound.
 */
export class Deadline {
  expired = false;
  private readonly timer: NodeJS.Timeout;
  private onExpire: (() => void) | undefined;

  constructor(readonly at: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.onExpire?.();
    }, Math.max(0, at - Date.now()));
  }

  /** Milliseconds left, at least 1 (0 would switch PostgreSQL's timeouts off). */
  remaining(): number {
    return Math.max(1, Math.ceil(this.at - Date.now()));
  }

  /** `work`, or what `expire` settles with when the deadline passes first (then `work` is left running). */
  race<T>(work: Promise<T>, expire: () => Promise<T>): Promise<T> {
    if (this.expired) {
      work.catch(() => undefined);
      return expire();
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        this.onExpire = undefined;
        fn();
      };
      this.onExpire = () => settle(() => void expire().then(resolve, reject));
      work.then(
        (value) => settle(() => resolve(value)),
        (error: unknown) => settle(() => reject(error)),
      );
    });
  }

  end(): void {
    clearTimeout(this.timer);
  }
}

export const unavailable = (what: string): StorageUnavailableError => new StorageUnavailableError(what, "ETIMEDOUT");

/**
 * How long past its deadline an operation waits for the server's own answer to an abort (a
 * cancel's 57014, a COMMIT's outcome): a live server answers in milliseconds; one that does not is
 * silent, and only then is the answer 503 without a confirmation (D28's one ambiguity).
 */
export const confirmMarginMs = (timeoutMs: number): number => Math.min(1_000, Math.max(200, Math.round(timeoutMs / 5)));

/** A connection within the deadline; one handed over later is closed, never reused. */
export function checkout(pool: PgPoolLike, deadline: Deadline, timeoutMs: number): Promise<PgPoolClientLike> {
  const pending = pool.connect();
  return deadline.race(pending, () => {
    pending.then((late) => late.release(true), () => undefined);
    return Promise.reject(unavailable(`no connection within ${timeoutMs} ms`));
  });
}

/** `work`'s own outcome if it comes within `ms`, else `fallback`'s. */
export function within<T>(work: Promise<T>, ms: number, fallback: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => void fallback().then(resolve, reject), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** What a node-postgres `Client` carries to be cancelled: the backend's key and the server's address. */
interface CancelKey {
  processID: number;
  secretKey: number;
  host: string;
  port: number;
}

/** The client's cancel key, or null for a client that does not expose one (an embedder's own type). */
export function cancelKeyOf(client: PgPoolClientLike): CancelKey | null {
  const c = client as Partial<Record<keyof CancelKey, unknown>>;
  const ok = typeof c.processID === "number" && typeof c.secretKey === "number" && typeof c.host === "string" && typeof c.port === "number";
  return ok ? (c as CancelKey) : null;
}

/**
 * Sends PostgreSQL's CancelRequest for the statement `key`'s backend is running, on a connection
 * of its own (no pooled connection is needed, so a saturated pool cannot delay it). The server
 * answers nothing on that connection: the statement's own error (57014) is the confirmation.
 */
export function sendCancel(key: CancelKey): void {
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(80877102, 4);
  packet.writeInt32BE(key.processID, 8);
  packet.writeInt32BE(key.secretKey, 12);
  const socket = key.host.startsWith("/") ? connect(`${key.host}/.s.PGSQL.${key.port}`) : connect(key.port, key.host);
  socket.setTimeout(5_000, () => socket.destroy());
  socket.on("error", () => undefined);
  socket.on("connect", () => socket.end(packet));
}
