/**
 * Dispatchers in child processes over one SQLite file (decision D15): the parent holds its own
 * runplane on the same file, a node:http receiver on 127.0.0.1 counting requests per
 * task_result_id, and spawns `fixtures/dispatcher-child.ts` with `node --import tsx`.
 */
import Database from "better-sqlite3";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSqliteStorage, type SqliteSynchronousMode } from "../../adapters/sqlite/index.js";
import { createRunplane, generateKey, silentLogger, type Runplane } from "../../src/index.js";
import type { Storage } from "../../src/storage/types.js";
import { noRealDns, START } from "./support.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CHILD = fileURLToPath(new URL("./fixtures/dispatcher-child.ts", import.meta.url));

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The last virtual time the child printed before a tick. */
  lastTime: number | null;
}

export interface ChildHandle {
  process: ChildProcess;
  /** Resolves when the child printed `ready` (with RUNPLANE_WAIT_GO). */
  ready: Promise<void>;
  go(): void;
  exit: Promise<ChildExit>;
}

/** Spawns the dispatcher child with `env` on top of the parent's. */
export function spawnChild(env: Record<string, string>): ChildHandle {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    if (/^ready$/m.test(stdout)) markReady();
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exit = once(child, "exit").then(([code, signal]) => {
    const times = [...stdout.matchAll(/^t=(\d+)$/gm)].map((m) => Number(m[1]));
    return { code: code as number | null, signal: signal as NodeJS.Signals | null, stdout, stderr, lastTime: times.at(-1) ?? null };
  });
  return { process: child, ready, go: () => child.stdin!.end("go\n"), exit };
}

/** How the receiver answers a run task request at a given path. */
export type Behaviour = (body: Record<string, any>) => Promise<number> | number;

export interface Receiver {
  url(path: string): string;
  /** Raw bodies of run task requests per task_result_id (verification requests excluded). */
  posts: Map<string, Buffer[]>;
  close(): Promise<void>;
}

export async function startReceiver(behaviours: Record<string, Behaviour>): Promise<Receiver> {
  const posts = new Map<string, Buffer[]>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const body = JSON.parse(raw.toString("utf8")) as Record<string, any>;
      if (body.access_token === "test-token") return void res.writeHead(200).end();
      const id = String(body.task_result_id);
      posts.set(id, [...(posts.get(id) ?? []), raw]);
      const behaviour = behaviours[req.url ?? ""] ?? (() => 404);
      void Promise.resolve(behaviour(body)).then((status) => res.writeHead(status).end());
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    posts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface SharedFile {
  path: string;
  key: string;
  /** The parent's own runplane on the file; its clock stands at START. */
  parent: Runplane;
  /** The parent's storage, for reading what the children wrote. */
  storage(): Storage;
  /** Env every child needs. */
  childEnv: Record<string, string>;
  dispose(): Promise<void>;
}

/**
 * The test process's own runplane on a storage its children share (keyring key `key`), allowed to
 * reach 127.0.0.1 only, with organization `acme`, project `prj-a` and workspace `ws-a`.
 */
export async function parentRunplane(storage: Storage, key: string, clock?: () => Date): Promise<Runplane> {
  const parent = createRunplane({
    storage,
    logger: silentLogger,
    keyring: { keys: [{ id: "k1", key }] },
    ...(clock ? { clock } : {}),
    publicUrl: "https://runplane.example",
    egress: { allow: ["127.0.0.1/32"], resolve: noRealDns },
  });
  const d = parent.directory;
  await d.organizations.create({ name: "acme" });
  await d.projects.create({ id: "prj-a", name: "alpha", organization: "acme" });
  await d.workspaces.create({ id: "ws-a", name: "alpha-ws", organization: "acme", projectId: "prj-a" });
  return parent;
}

/** A temp SQLite file with acme/ws-a, and a parent runplane on it allowed to reach 127.0.0.1. */
export async function sharedFile(synchronous: SqliteSynchronousMode = "FULL"): Promise<SharedFile> {
  const dir = mkdtempSync(join(tmpdir(), "runplane-dispatch-"));
  const path = join(dir, "runplane.db");
  const key = generateKey();
  const storage = createSqliteStorage(new Database(path), { synchronous });
  const parent = await parentRunplane(storage, key, () => new Date(START));
  return {
    path,
    key,
    parent,
    storage: () => storage,
    childEnv: { RUNPLANE_DB: path, RUNPLANE_KEY: key, RUNPLANE_SYNCHRONOUS: synchronous },
    async dispose() {
      await parent.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Creates one mandatory post_plan task per URL through `parent` (a `SharedFile`'s or any runplane;
 * each verified) and attaches it to `ws-a`; resolves the task ids.
 */
export async function attachTasks(parent: SharedFile | Runplane, urls: string[]): Promise<string[]> {
  const runplane = "handler" in parent ? parent : parent.parent;
  const ids: string[] = [];
  for (const [i, url] of urls.entries()) {
    const task = await runplane.runTasks.tasks.create("acme", { name: `task-${i}`, url });
    await runplane.runTasks.workspaceTasks.create("ws-a", task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
    ids.push(task.id);
  }
  return ids;
}
