import { countStatement, newStatementCount, type StatementCount } from "../sql/statement-count.js";
import type { PgPoolClientLike, PgPoolLike, PgQueryConfig } from "./pg-types.js";

/**
 * decision D56: `pool` as the adapter sees it, counting every statement it sends (on the pool or
 * on a client it checked out, decision D39) into `count`. A BEGIN counts as a transaction even
 * when its round trip also carries the `SET LOCAL` timeouts. For tests (the statement budgets):
 * hand the wrapper to `createPostgresStorage` instead of the pool.
 */
export function countingPool(pool: PgPoolLike, count: StatementCount = newStatementCount()): { pool: PgPoolLike; count: StatementCount } {
  const tally = (config: PgQueryConfig): void => countStatement(count, config.text);
  const wrapped: PgPoolLike = {
    query: (config) => (tally(config), pool.query(config)),
    async connect() {
      const client = await pool.connect();
      // The client's own fields stay visible through the prototype (its cancel key, D39).
      const counting: PgPoolClientLike = Object.create(client);
      counting.query = (config: PgQueryConfig) => (tally(config), client.query(config));
      return counting;
    },
    on: (event, listener) => pool.on(event, listener),
    removeListener: (event, listener) => pool.removeListener(event, listener),
    end: () => pool.end(),
  };
  return { pool: wrapped, count };
}
