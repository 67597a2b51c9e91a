/**
 * The few node-postgres methods the adapter uses, typed structurally (like `SqliteDatabase`): a
 * host's `new pg.Pool(...)` fits without the published declarations mentioning `pg`.
 */
export interface PgPoolLike {
  query(config: PgQueryConfig): Promise<PgQueryResult>;
  connect(): Promise<PgPoolClientLike>;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeListener(event: "error", listener: (error: Error) => void): unknown;
  end(): Promise<void>;
}

export interface PgPoolClientLike {
  query(config: PgQueryConfig): Promise<PgQueryResult>;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  removeListener(event: "error" | "notification", listener: (...args: any[]) => void): unknown;
  /** Gives the connection back; with an error the pool closes it instead of reusing it. */
  release(error?: Error | boolean): void;
}

export interface PgQueryConfig {
  text: string;
  values?: unknown[];
  /** A prepared statement's name: each connection parses and plans it once. */
  name?: string;
  /**
   * decision D39: when the operation this statement is must end (ms since the epoch), for a statement
   * that serves callers who asked earlier (a write group); the bounded pool consumes it.
   */
  deadlineAt?: number;
}

export interface PgQueryResult {
  rows: any[];
  rowCount: number | null;
}

/** What runs one statement: the pool (autocommit) or a client inside a transaction. */
export type Queryable = Pick<PgPoolLike, "query">;
