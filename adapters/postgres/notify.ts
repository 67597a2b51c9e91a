import type { StopListening } from "../../src/storage/notifications.js";
import type { PgPoolClientLike, PgPoolLike } from "./driver.js";

/**
 * decision D27: writes that make deliveries claimable (a stage start's new rows, a retry, a
 * released lease) send `NOTIFY runplane_deliveries` inside their transaction, with the schema as
 * payload so several runplane schemas in one database tell their wake-ups apart. PostgreSQL
 * delivers it only after COMMIT, never after a ROLLBACK. It is a hint: polling stays the authority.
 */
export const DELIVERY_CHANNEL = "runplane_deliveries";

/** `SELECT` text that sends the wake-up for the schema bound as `@schema`. */
export const NOTIFY_SQL = `SELECT pg_notify('${DELIVERY_CHANNEL}', @schema::text)`;

export interface PgNotification {
  channel: string;
  payload?: string;
}

/** One subscriber of a channel on the shared listening connection. */
export interface ChannelListener {
  channel: string;
  onMessage(payload: string): void;
  /** The connection was lost and is back: whatever was sent meanwhile is gone. */
  onReconnect(): void;
}

/** `Storage.listen`: wake-ups of `schema`, and one after every reconnect (what was sent meanwhile is lost). */
export const deliveryWakeups = (schema: string, onWake: () => void): ChannelListener => ({
  channel: DELIVERY_CHANNEL,
  onMessage(payload) {
    if (payload === schema) onWake();
  },
  onReconnect: onWake,
});

export interface NotificationHub {
  /** Resolves once `listener.channel` is listened to; rejects when the connection fails. */
  subscribe(listener: ChannelListener): Promise<StopListening>;
  /** Stops every subscription and gives the connection back. */
  close(): Promise<void>;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/** Where the reconnect back-off waits: real timers, or a test's own so it can read each delay. */
export interface RetryTimer {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}
const realTimer: RetryTimer = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

/**
 * One pool connection per storage instance in `LISTEN`, shared by every subscription (wake-ups and
 * status changes), held only while there is one. When the connection is lost it reconnects (100 ms
 * doubling to 5 s), listens again and tells every subscriber. Changes to the connection run one
 * at a time, so subscribing and stopping never race each other or a reconnect.
 */
export function createNotificationHub(pool: PgPoolLike, timer: RetryTimer = realTimer): NotificationHub {
  const listeners = new Set<ChannelListener>();
  const listened = new Set<string>();
  let client: PgPoolClientLike | undefined;
  let lost = false;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let retry: unknown;
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(step: () => Promise<T>): Promise<T> => {
    const next = chain.then(step);
    chain = next.catch(() => undefined);
    return next;
  };

  // Runs inside the driver's socket handler: a throwing subscriber must not take the process down.
  const safely = (l: ChannelListener, call: () => void): void => {
    try {
      call();
    } catch (error) {
      console.warn(`runplane postgres: a ${l.channel} subscriber failed (${error instanceof Error ? error.name : typeof error})`);
    }
  };
  const onNotification = (message: PgNotification): void => {
    for (const l of [...listeners]) if (l.channel === message.channel) safely(l, () => l.onMessage(message.payload ?? ""));
  };
  const onError = (error: Error): void => {
    if (!client) return;
    drop(error);
    reconnectLater();
  };
  function drop(error?: unknown): void {
    const c = client;
    if (!c) return;
    client = undefined;
    listened.clear();
    lost = listeners.size > 0;
    c.removeListener("notification", onNotification);
    c.removeListener("error", onError);
    c.release(error instanceof Error ? error : true);
  }

  /** Brings the connection in line with the listeners: listening to each wanted channel, or released. */
  async function sync(): Promise<void> {
    const wanted = new Set([...listeners].map((l) => l.channel));
    try {
      if (wanted.size === 0) {
        if (client) await client.query({ text: "UNLISTEN *" });
        const c = client;
        client = undefined;
        listened.clear();
        c?.removeListener("notification", onNotification);
        c?.removeListener("error", onError);
        c?.release();
        return;
      }
      const fresh = !client;
      if (!client) {
        const c = await pool.connect();
        c.on("notification", onNotification);
        c.on("error", onError);
        client = c;
      }
      const c = client;
      for (const channel of wanted) if (!listened.has(channel)) await c.query({ text: `LISTEN ${channel}` }), listened.add(channel);
      for (const channel of listened) if (!wanted.has(channel)) await c.query({ text: `UNLISTEN ${channel}` }), listened.delete(channel);
      // The connection failed while it was being set up (onError dropped it): not listening.
      if (client !== c) throw new Error("runplane postgres: the listening connection was lost");
      if (fresh && lost) {
        lost = false;
        retryMs = FIRST_RETRY_MS;
        for (const l of [...listeners]) safely(l, () => l.onReconnect());
      }
    } catch (error) {
      drop(error);
      // Whatever this attempt noted as listened belonged to a connection that is gone.
      if (!client) listened.clear();
      throw error;
    }
  }

  function reconnectLater(): void {
    if (closed || retry !== undefined || listeners.size === 0) return;
    retry = timer.set(() => {
      retry = undefined;
      serial(async () => (client ? undefined : sync())).catch(() => {
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
        reconnectLater();
      });
    }, retryMs);
  }

  return {
    async subscribe(listener) {
      if (closed) throw new Error("runplane postgres: the storage is closed");
      // A subscription of its own, even when one object subscribes twice.
      const own: ChannelListener = { ...listener };
      listeners.add(own);
      try {
        await serial(sync);
      } catch (error) {
        listeners.delete(own);
        if (listeners.size === 0) lost = false;
        reconnectLater();
        throw error;
      }
      return async () => {
        if (!listeners.delete(own)) return;
        await serial(sync).catch(() => undefined);
      };
    },
    async close() {
      closed = true;
      timer.clear(retry);
      listeners.clear();
      await serial(sync).catch(() => undefined);
    },
  };
}
