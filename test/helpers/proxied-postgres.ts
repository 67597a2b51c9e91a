import pg from "pg";
import { createPostgresStorage, type PostgresStorage, type PostgresStorageOptions } from "../../adapters/postgres/index.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "./postgres.js";
import { startTcpProxy, throughProxy, type TcpProxy } from "./tcp-proxy.js";

/** A PostgreSQL storage in a schema of its own whose pool reaches the server through a TCP proxy. */
export interface ProxiedPostgres {
  proxy: TcpProxy;
  pool: pg.Pool;
  storage: PostgresStorage;
  /** Heals the proxy, runs `first` (closing what uses the storage), ends the pool, drops the schema. */
  close(first?: () => Promise<unknown>): Promise<void>;
}

/**
 * The set-up of the D28 outage tests: the server others share is never touched, only this pool's
 * way to it (the proxy closes, resets or blackholes).
 */
export async function proxiedPostgres(label: string, poolOptions: pg.PoolConfig = {}, options: PostgresStorageOptions = {}): Promise<ProxiedPostgres> {
  const target = new URL(DATABASE_URL);
  const schema = uniqueSchema(label);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const pool = new pg.Pool({ connectionString: throughProxy(DATABASE_URL, proxy), ...poolOptions });
  pool.on("error", () => undefined);
  const storage = await createPostgresStorage(pool, { schema, ...options });
  return {
    proxy,
    pool,
    storage,
    async close(first) {
      await proxy.open();
      await first?.();
      await pool.end().catch(() => undefined);
      const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      await dropSchema(admin, schema);
      await admin.end();
      await proxy.close();
    },
  };
}
