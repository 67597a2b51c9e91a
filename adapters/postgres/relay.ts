import type { MessageRelay } from "../../src/storage/notifications.js";
import { RELAY_MAX_CHARS } from "../../src/storage/notifications.js";
import type { PgPoolLike } from "./driver.js";
import { rowsOf, sql } from "./driver.js";
import type { NotificationHub } from "./notify.js";

/**
 * decision D34: `Storage.relay` on PostgreSQL: `pg_notify('runplane_relay', ...)` with the schema and
 * the sending instance's origin in the payload, heard on the shared listening connection; an
 * instance never hears its own messages.
 */
export const RELAY_CHANNEL = "runplane_relay";

const NOTIFY = sql(`SELECT pg_notify('${RELAY_CHANNEL}', @payload::text)`);

export function createMessageRelay(pool: PgPoolLike, hub: NotificationHub, schema: string, origin: string): MessageRelay {
  return {
    async publish(message) {
      if (message.length > RELAY_MAX_CHARS) throw new RangeError(`a relay message is at most ${RELAY_MAX_CHARS} characters`);
      await rowsOf(pool, NOTIFY, { payload: JSON.stringify({ schema, origin, message }) });
    },
    subscribe: (listener) =>
      hub.subscribe({
        channel: RELAY_CHANNEL,
        onMessage(payload) {
          let p: { schema?: unknown; origin?: unknown; message?: unknown };
          try {
            p = JSON.parse(payload) as typeof p;
          } catch {
            return;
          }
          if (p.schema === schema && p.origin !== origin && typeof p.message === "string") listener(p.message);
        },
        // Messages sent meanwhile are lost; whoever waits for an answer gives up after its bound.
        onReconnect: () => undefined,
      }),
  };
}
