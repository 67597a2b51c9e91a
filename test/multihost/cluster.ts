/**
 * Multi-host tests (decision D27): real processes, each a host with its own pool, on one
 * PostgreSQL schema per test file. The parent keeps a runplane of its own on the schema for set-up
 * and checks, and spawns `fixtures/*.ts` with `node --import tsx`, talking to them in lines.
 */
import pg from "pg";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createPostgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { createRunplane, generateKey, silentLogger, type Runplane } from "../../src/index.js";
import type { ChildExit } from "../delivery/processes.js";
import { noRealDns } from "../delivery/support.js";
import { DATABASE_URL, dropSchema, resetSchema, uniqueSchema } from "../helpers/postgres.js";

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

/**
 * The parent's runplane on `shared` (real time unless `clock`), allowed to reach 127.0.0.1 only,
 * with organization `acme`, project `prj-a` and workspace `ws-a`.
 */
export async function openParent(shared: SharedSchema, clock?: () => Date): Promise<Parent> {
  const storage = await createPostgresStorage(DATABASE_URL, { schema: shared.schema });
  const runplane = createRunplane({
    storage,
    logger: silentLogger,
    keyring: { keys: [{ id: "k1", key: shared.key }] },
    ...(clock ? { clock } : {}),
    publicUrl: "https://runplane.example",
    egress: { allow: ["127.0.0.1/32"], resolve: noRealDns },
  });
  const d = runplane.directory;
  await d.organizations.create({ name: "acme" });
  await d.projects.create({ id: "prj-a", name: "alpha", organization: "acme" });
  await d.workspaces.create({ id: "ws-a", name: "alpha-ws", organization: "acme", projectId: "prj-a" });
  return { runplane, storage, close: () => runplane.close() };
}

/** Creates one mandatory post_plan task per URL through `runplane` (each verified) and attaches it to `ws-a`. */
export async function attachTasks(runplane: Runplane, urls: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, url] of urls.entries()) {
    const task = await runplane.runTasks.tasks.create("acme", { name: `task-${i}`, url });
    await runplane.runTasks.workspaceTasks.create("ws-a", task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
    ids.push(task.id);
  }
  return ids;
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
export function spawnHost(fixture: "host" | "tick-host" | "worker", env: Record<string, string>): HostProcess {
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
