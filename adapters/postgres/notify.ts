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

/** Stops listening and gives the connection back to the pool. */
export type StopListening = () => Promise<void>;

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/**
 * Holds one pool connection in `LISTEN runplane_deliveries` and calls `onWake` for every wake-up
 * of `schema`. When the connection is lost it reconnects (100 ms doubling to 5 s) and then calls
 * `onWake` once, since wake-ups sent meanwhile were lost. Resolves once listening; rejects when the
 * first connection fails.
 */
export async function listenForDeliveries(pool: PgPoolLike, schema: string, onWake: () => void): Promise<StopListening> {
  let stopped = false;
  let client: PgPoolClientLike | undefined;
  let retryMs = FIRST_RETRY_MS;

  const onNotification = (message: PgNotification): void => {
    if (message.channel === DELIVERY_CHANNEL && message.payload === schema) onWake();
  };
  const onError = (error: Error): void => {
    const lost = client;
    if (!lost) return;
    client = undefined;
    detach(lost);
    lost.release(error);
    if (!stopped) void reconnect();
  };
  const detach = (c: PgPoolClientLike): void => {
    c.removeListener("notification", onNotification);
    c.removeListener("error", onError);
  };

  async function connect(): Promise<void> {
    const c = await pool.connect();
    c.on("notification", onNotification);
    c.on("error", onError);
    client = c;
    try {
      await c.query({ text: `LISTEN ${DELIVERY_CHANNEL}` });
    } catch (error) {
      if (client === c) {
        client = undefined;
        detach(c);
        c.release(error instanceof Error ? error : true);
      }
      throw error;
    }
  }

  async function reconnect(): Promise<void> {
    while (!stopped && !client) {
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      if (stopped) return;
      try {
        await connect();
        retryMs = FIRST_RETRY_MS;
        onWake();
      } catch {
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      }
    }
  }

  await connect();
  return async () => {
    stopped = true;
    const c = client;
    client = undefined;
    if (!c) return;
    try {
      await c.query({ text: `UNLISTEN ${DELIVERY_CHANNEL}` });
      detach(c);
      c.release();
    } catch (error) {
      detach(c);
      c.release(error instanceof Error ? error : true);
    }
  };
}
