import { existsSync } from "node:fs";
import { join } from "node:path";
import { readServerConfig, type ServerConfig } from "../../examples/server/config.js";
import { openDataDir, parseKeyring } from "../../examples/server/state.js";
import { openServerStorage, type ServerStorage } from "../../examples/server/storage.js";
import { createKeyring, createRunplane, generateKey, type KeyringOptions, type Runplane } from "../index.js";
import { inspectSealedValues } from "../services/sealed-values.js";

/** The settings these commands read; a wrong one is refused naming it, like `serve` does. */
const READ = ["DATA_DIR", "DATABASE_URL", "DATABASE_SCHEMA"];

/**
 * Opens what the reference server would open (its data directory, keyring and storage), for the
 * commands that work on a server's data while it runs or while it is stopped. Runs `fn`, then
 * closes. It never creates that data: a folder or database that does not exist is
 * refused, naming the folder, instead of a new one holding a token for no server.
 */
export async function withServerData<T>(
  env: NodeJS.ProcessEnv,
  fn: (runplane: Runplane, store: ServerStorage) => Promise<T>,
  options: { keyringMustOpen?: boolean; keyring?: boolean } = {},
): Promise<T> {
  const { config, problems } = readServerConfig(env);
  const wrong = problems.filter((p) => READ.includes(p.variable));
  if (wrong.length) throw new Error(wrong.map((p) => p.message).join("; "));
  const keyring = options.keyring === false ? noKeyring(config) : existingKeyring(config, env);
  const store = await openServerStorage({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    poolSize: 2,
    sqlitePath: join(config.dataDir, "runplane.db"),
  });
  // A command that opens the data for a moment is no host: it seals nothing after it ends (D29a).
  const runplane = createRunplane({ storage: store.storage, keyring, host: false });
  try {
    if (options.keyringMustOpen) await keyringOpens(store, keyring);
    return await fn(runplane, store);
  } finally {
    await runplane.close();
    await store.close();
  }
}

/**
 * Refuses a keyring that does not open the values the database holds (D11, D29): a key under a
 * known id with other bytes would otherwise re-encrypt nothing and report success, as serve and
 * doctor already refuse it.
 */
async function keyringOpens(store: ServerStorage, keyring: KeyringOptions): Promise<void> {
  const { failure } = await inspectSealedValues(store.storage, createKeyring(keyring));
  if (failure) throw new Error(`the keyring does not open the database's sealed values: ${failure}`);
}

/**
 * For a command that reads no sealed value (`audit verify` checks digests): the database must
 * exist, the keyring need not, and none is read or written (a keyring file created here would hold
 * a key under the server's key id with other bytes). A key of this process alone, never stored,
 * stands in: the command opens the storage as no host, so it seals nothing.
 */
function noKeyring(config: ServerConfig): KeyringOptions {
  if (!config.databaseUrl) dataDirHolds(config.dataDir, true);
  return { keys: [{ id: "unused", key: generateKey() }] };
}

/** Refuses a data directory that does not exist or (without a database URL) holds no runplane.db. */
function dataDirHolds(dir: string, database: boolean): void {
  const start = `start \`runplane serve --data-dir ${dir}\` first (it creates them), or point --data-dir (DATA_DIR) at the server's data directory`;
  if (!existsSync(dir)) throw new Error(`data directory ${dir} does not exist: ${start}`);
  if (database && !existsSync(join(dir, "runplane.db"))) throw new Error(`data directory ${dir} holds no runplane database (runplane.db): ${start}`);
}

/** The server's keyring, once its data is known to exist. */
function existingKeyring(config: ServerConfig, env: NodeJS.ProcessEnv): KeyringOptions {
  const dir = config.dataDir;
  const fromEnv = env.RUNPLANE_KEYRING?.trim();
  // PostgreSQL with RUNPLANE_KEYRING reads nothing from the data directory (hosts sharing no disk).
  if (config.databaseUrl && fromEnv) return parseKeyring(fromEnv, "RUNPLANE_KEYRING");
  dataDirHolds(dir, !config.databaseUrl);
  return openDataDir(dir, env).keyring();
}
