/**
 * Multi-host tests (decision D27): real processes, each a host with its own pool, on one
 * PostgreSQL schema per test file. The parent keeps a runplane of its own on the schema for set-up
 * and checks, and spawns `fixtures/*.ts` with `node --import tsx`, talking to them in lines.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createPostgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { generateKey, type Runplane } from "../../src/index.js";
import { parentRunplane, startReceiver, type Behaviour, type ChildExit, type Receiver } from "../delivery/processes.js";
import { DATABASE_URL, dropSchema, resetSchema, uniqueSchema } from "../helpers/postgres.js";

export { attachTasks } from "../delivery/processes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface SharedSchema {
  schema: string;
  /** The keyring key every host and the parent share. */
  key: string;
  /** A pool of the parent's for direct SQL (pg_terminate_backend, counting rows). */
  admin: pg.Pool;
  /** Env a child needs to open this schema; `appName` becomes its pool's `application_name`. */
  childEnv(appName: string): Record<string, string>;
  /** Empties the schema (one transaction) for the next case. */
  reset(): Promise<void>;
  drop(): Promise<void>;
}

/** A new schema, migrated once, for one test file. */
export async function sharedSchema(label: string): Promise<SharedSchema> {
  const schema = uniqueSchema(label);
  const key = generateKey();
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  admin.on("error", () => undefined);
  await (await createPostgresStorage(admin, { schema })).close();
  return {
    schema,
    key,
    admin,
    childEnv: (appName) => ({ DATABASE_URL, RUNPLANE_SCHEMA: schema, RUNPLANE_KEY: key, RUNPLANE_APP_NAME: appName }),
    reset: () => resetSchema(admin, schema),
    async drop() {
      await dropSchema(admin, schema);
      await admin.end();
    },
  };
}

export interface Parent {
  runplane: Runplane;
  storage: PostgresStorage;
  close(): Promise<void>;
}

/** The parent's runplane on `shared` (real time unless `clock`); see `parentRunplane`. */
export async function openParent(shared: SharedSchema, clock?: () => Date): Promise<Parent> {
  const storage = await createPostgresStorage(DATABASE_URL, { schema: shared.schema });
  const runplane = await parentRunplane(storage, shared.key, clock);
  return { runplane, storage, close: () => runplane.close() };
}

export interface HostProcess {
  child: ChildProcess;
  /** The first stdout line (from the start) matching `pattern`; rejects when the process exits first or after `timeoutMs`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  send(line: string): void;
  /** Everything the child wrote to stderr so far. */
  stderr(): string;
  exit: Promise<ChildExit>;
}

/** Spawns `fixtures/<fixture>.ts` with `env` on top of the parent's. */
export function spawnHost(fixture: Fixture, env: Record<string, string>): HostProcess {
  const script = fileURLToPath(new URL(`./fixtures/${fixture}.ts`, import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    for (const check of [...waiters]) check();
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  // "close", not "exit": by then every line the child wrote has arrived.
  const exit = once(child, "close").then(([code, signal]) => {
    const times = [...stdout.matchAll(/^t=(\d+)$/gm)].map((m) => Number(m[1]));
    return { code: code as number | null, signal: signal as NodeJS.Signals | null, stdout, stderr, lastTime: times.at(-1) ?? null };
  });
  const line = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const anchored = new RegExp(pattern.source, pattern.flags.includes("m") ? pattern.flags : `${pattern.flags}m`);
      const done = () => (waiters.delete(check), clearTimeout(timer));
      const check = () => {
        const match = anchored.exec(stdout);
        if (match) done(), resolve(match);
      };
      const timer = setTimeout(() => (done(), reject(new Error(`no line ${pattern} within ${timeoutMs} ms:\n${stdout}\n${stderr}`))), timeoutMs);
      waiters.add(check);
      check();
      void exit.then((e) => {
        if (waiters.has(check)) done(), reject(new Error(`exited (${e.code ?? e.signal}) before ${pattern}:\n${e.stdout}\n${e.stderr}`));
      });
    });
  return { child, line, send: (text) => void child.stdin!.write(`${text}\n`), stderr: () => stderr, exit };
}

/** Kills what is still running of `hosts` (a failed case must not leave processes behind). */
export async function killAll(hosts: readonly HostProcess[]): Promise<void> {
  for (const h of hosts) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill("SIGKILL");
  await Promise.all(hosts.map((h) => h.exit));
}

export type Fixture = "host" | "tick-host" | "worker";

/** One test file's cluster: its schema, and what the running case opened (cleaned up after it). */
export interface Cluster {
  readonly shared: SharedSchema;
  /** Empties the schema and opens the parent on it (real time unless `clock`). */
  open(clock?: () => Date): Promise<Parent>;
  /** A loopback receiver counting requests per task_result_id (test/delivery/processes.ts). */
  receive(behaviours: Record<string, Behaviour>): Promise<Receiver>;
  /** Spawns a host named `name` (its pool's `application_name`) on the schema. */
  spawn(fixture: Fixture, name: string, env?: Record<string, string>): HostProcess;
}

/**
 * Registers a multi-host test file's hooks (call it inside `describe`): a schema for the file,
 * migrated once and dropped at the end; after each case its hosts are killed if still running and
 * its receiver and parent closed, so a failed case leaves nothing behind.
 */
export function useCluster(label: string): Cluster {
  let shared: SharedSchema | undefined;
  let parent: Parent | undefined;
  let receiver: Receiver | undefined;
  const hosts: HostProcess[] = [];
  beforeAll(async () => {
    shared = await sharedSchema(label);
  });
  afterEach(async () => {
    await killAll(hosts.splice(0));
    await receiver?.close();
    await parent?.close();
    receiver = parent = undefined;
  });
  afterAll(async () => {
    await shared?.drop();
  });
  const schema = (): SharedSchema => {
    if (!shared) throw new Error("useCluster: the schema is made in beforeAll");
    return shared;
  };
  return {
    get shared() {
      return schema();
    },
    async open(clock) {
      await schema().reset();
      return (parent = await openParent(schema(), clock));
    },
    receive: async (behaviours) => (receiver = await startReceiver(behaviours)),
    spawn(fixture, name, env = {}) {
      const h = spawnHost(fixture, { ...schema().childEnv(name), ...env });
      hosts.push(h);
      return h;
    },
  };
}
