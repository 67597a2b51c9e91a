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

/** The hub's state, shared by its connection's lifecycle and its subscriber bookkeeping. */
interface HubState {
  readonly listeners: Set<ChannelListener>;
  /** The channels the current connection listens to. */
  readonly listened: Set<string>;
  client: PgPoolClientLike | undefined;
  /** The connection was lost while there were subscribers: the next fresh one tells them. */
  lost: boolean;
  closed: boolean;
  retryMs: number;
  retry: unknown;
}

/** Runs steps one at a time, in the order they were asked for; a failed step does not stop the next. */
function serializer(): <T>(step: () => Promise<T>) => Promise<T> {
  let chain: Promise<unknown> = Promise.resolve();
  return <T>(step: () => Promise<T>): Promise<T> => {
    const next = chain.then(step);
    chain = next.catch(() => undefined);
    return next;
  };
}

// Runs inside the driver's socket handler: a throwing subscriber must not take the process down.
function safely(l: ChannelListener, call: () => void): void {
  try {
    call();
  } catch (error) {
    console.warn(`runplane postgres: a ${l.channel} subscriber failed (${error instanceof Error ? error.name : typeof error})`);
  }
}

interface ListeningConnection {
  /** Brings the connection in line with the listeners: listening to each wanted channel, or released. */
  sync(): Promise<void>;
}

/** The connection's lifecycle: taken from the pool, LISTEN/UNLISTEN, given back, or dropped on error (then `onLost`). */
function listeningConnection(pool: PgPoolLike, state: HubState, onLost: () => void): ListeningConnection {
  const onNotification = (message: PgNotification): void => {
    for (const l of [...state.listeners]) if (l.channel === message.channel) safely(l, () => l.onMessage(message.payload ?? ""));
  };
  const onError = (error: Error): void => {
    if (!state.client) return;
    drop(error);
    onLost();
  };
  const detach = (c: PgPoolClientLike): void => {
    c.removeListener("notification", onNotification);
    c.removeListener("error", onError);
  };
  /** Lets go of a failed connection (the pool discards it); whoever was subscribed is owed a reconnect. */
  function drop(error?: unknown): void {
    const c = state.client;
    if (!c) return;
    state.client = undefined;
    state.listened.clear();
    state.lost = state.listeners.size > 0;
    detach(c);
    c.release(error instanceof Error ? error : true);
  }
  async function connect(): Promise<PgPoolClientLike> {
    const c = await pool.connect();
    c.on("notification", onNotification);
    c.on("error", onError);
    state.client = c;
    return c;
  }
  /** No channel wanted: stops listening and gives the connection back. */
  async function release(): Promise<void> {
    if (state.client) await state.client.query({ text: "UNLISTEN *" });
    const c = state.client;
    state.client = undefined;
    state.listened.clear();
    if (c) detach(c);
    c?.release();
  }
  async function sync(): Promise<void> {
    const wanted = new Set([...state.listeners].map((l) => l.channel));
    const { listened } = state;
    try {
      if (wanted.size === 0) return await release();
      const fresh = !state.client;
      const c = state.client ?? (await connect());
      for (const channel of wanted) if (!listened.has(channel)) await c.query({ text: `LISTEN ${channel}` }), listened.add(channel);
      for (const channel of listened) if (!wanted.has(channel)) await c.query({ text: `UNLISTEN ${channel}` }), listened.delete(channel);
      // The connection failed while it was being set up (onError dropped it): not listening.
      if (state.client !== c) throw new Error("runplane postgres: the listening connection was lost");
      if (fresh && state.lost) {
        state.lost = false;
        state.retryMs = FIRST_RETRY_MS;
        for (const l of [...state.listeners]) safely(l, () => l.onReconnect());
      }
    } catch (error) {
      drop(error);
      // Whatever this attempt noted as listened belonged to a connection that is gone.
      if (!state.client) listened.clear();
      throw error;
    }
  }
  return { sync };
}

/** After a lost connection: tries again (100 ms doubling to 5 s) while there are subscribers and no connection. */
function reconnector(state: HubState, timer: RetryTimer, serial: ReturnType<typeof serializer>, sync: () => Promise<void>): () => void {
  return function reconnectLater(): void {
    if (state.closed || state.retry !== undefined || state.listeners.size === 0) return;
    state.retry = timer.set(() => {
      state.retry = undefined;
      serial(async () => (state.client ? undefined : sync())).catch(() => {
        state.retryMs = Math.min(state.retryMs * 2, MAX_RETRY_MS);
        reconnectLater();
      });
    }, state.retryMs);
  };
}

/**
 * One pool connection per storage instance in `LISTEN`, shared by every subscription (wake-ups and
 * status changes), held only while there is one. When the connection is lost it reconnects (100 ms
 * doubling to 5 s), listens again and tells every subscriber. Changes to the connection run one
 * at a time, so subscribing and stopping never race each other or a reconnect.
 */
export function createNotificationHub(pool: PgPoolLike, timer: RetryTimer = realTimer): NotificationHub {
  const state: HubState = {
    listeners: new Set(),
    listened: new Set(),
    client: undefined,
    lost: false,
    closed: false,
    retryMs: FIRST_RETRY_MS,
    retry: undefined,
  };
  const serial = serializer();
  const connection = listeningConnection(pool, state, () => reconnectLater());
  const reconnectLater = reconnector(state, timer, serial, connection.sync);
  const { listeners } = state;

  return {
    async subscribe(listener) {
      if (state.closed) throw new Error("runplane postgres: the storage is closed");
      // A subscription of its own, even when one object subscribes twice.
      const own: ChannelListener = { ...listener };
      listeners.add(own);
      try {
        await serial(connection.sync);
      } catch (error) {
        listeners.delete(own);
        if (listeners.size === 0) state.lost = false;
        reconnectLater();
        throw error;
      }
      return async () => {
        if (!listeners.delete(own)) return;
        await serial(connection.sync).catch(() => undefined);
      };
    },
    async close() {
      state.closed = true;
      timer.clear(state.retry);
      listeners.clear();
      await serial(connection.sync).catch(() => undefined);
    },
  };
}
