import { openDataDir } from "../../examples/server/state.js";
import { openServerStorage, type ServerStorage } from "../../examples/server/storage.js";
import { createRunplane, type Runplane } from "../index.js";
import { dataDirOf } from "./args.js";

/**
 * Opens what the reference server would open (its data directory, keyring and storage), for the
 * commands that work on a server's data while it runs or while it is stopped. Runs `fn`, then closes.
 */
export async function withServerData<T>(env: NodeJS.ProcessEnv, fn: (runplane: Runplane, store: ServerStorage) => Promise<T>): Promise<T> {
  const dataDir = openDataDir(dataDirOf(env), env);
  const keyring = dataDir.keyring();
  const store = await openServerStorage({
    databaseUrl: env.DATABASE_URL,
    schema: env.DATABASE_SCHEMA,
    poolSize: 2,
    sqlitePath: dataDir.database,
  });
  const runplane = createRunplane({ storage: store.storage, keyring });
  try {
    return await fn(runplane, store);
  } finally {
    await runplane.close();
    await store.close();
  }
}
