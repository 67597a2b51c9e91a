import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Storage } from "../../src/storage/types.js";
import { takeAuditEvent } from "../../src/storage/audit-scope.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import { METHOD_ACCESS, type MethodAccess } from "./writer-methods.js";
import { createPendingWrites } from "./writer-pending.js";
import { createCallSlots } from "./writer-slots.js";
import { fromWireError, type FromWriter, type ToWriter, type WriterStart } from "./writer-protocol.js";

/** What the tests (and `openSqliteStorage`) see of a writer thread; not part of the public API. */
export interface WriterThread {
  readonly worker: Worker;
  /** Resolves once the thread's connection is open; rejects if it died first. */
  readonly ready: Promise<void>;
  /** How many groups (transactions) the thread has committed or failed. */
  readonly groups: number;
}

const threads = new WeakMap<Storage, WriterThread>();

/** The writer thread behind a storage made with `writer: "thread"`, or undefined. */
export function writerThreadOf(storage: Storage): WriterThread | undefined {
  return threads.get(storage);
}

/**
 * The storage of the writer thread mode (decision D37): `local` (over the main thread's read-only
 * connection) answers every read; every write of {@link METHOD_ACCESS} goes to the writer thread,
 * whose answer settles the call after its group's COMMIT.
 */
export function createWriterThreadStorage(local: Storage, settings: Omit<WriterStart, "slots">, options: { script?: string | URL | undefined; writeTimeoutMs: number }): Storage {
  const slots = createCallSlots();
  const worker = startWorker({ ...settings, slots: slots.buffer }, options.script === undefined ? writerEntry() : scriptUrl(options.script));
  worker.unref(); // held only while calls wait, so an idle storage never keeps the process alive
  const waiting = createPendingWrites(options.writeTimeoutMs);
  let nextId = 1;
  let groups = 0;
  let stopped: string | null = null;
  let closed = false;
  const { promise: ready, resolve: markReady, reject: failReady } = settleLater();
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));

  const stop = (why: string): void => {
    if (stopped !== null) return;
    stopped = why;
    console.error(`runplane sqlite: the writer thread ${why}; every write answers 503 (storage unavailable) until the process restarts`);
    failReady(unavailable());
    waiting.rejectAll(unavailable);
  };

  worker.on("message", (message: FromWriter) => {
    if (message.type === "ready") return markReady();
    groups++;
    for (const outcome of message.outcomes) {
      slots.answered(outcome.id); // decision D39: the call ran or was skipped; its slot is free
      waiting.settle(outcome.id, outcome.ok ? outcome : { ok: false, error: fromWireError(outcome.error) });
    }
    if (waiting.size === 0) worker.unref();
  });
  // An error event names only its class: its message may quote a statement or a value.
  worker.on("error", (error) => stop(`failed (${error instanceof Error ? error.name : typeof error})`));
  worker.on("exit", (code) => {
    if (!closed || waiting.size > 0) stop(`exited (code ${code})`);
  });

  const send = (store: string, method: string, args: unknown[]): Promise<unknown> => {
    if (closed) return Promise.reject(new Error("storage closed"));
    if (stopped !== null) return Promise.reject(unavailable());
    const id = nextId++;
    const slot = slots.take(id);
    if (slot === null) return Promise.reject(full());
    return new Promise((resolve, reject) => {
      try {
        worker.postMessage(callMessage(id, slot, store, method, args));
      } catch (error) {
        // An argument structured clone cannot copy (a function): a programming error.
        return (slots.answered(id), reject(error));
      }
      waiting.add(id, resolve, reject, () => slots.cancel(slot));
      worker.ref();
    });
  };

  const storage = {
    ...routeStores(local, send),
    writesUnavailable: () => (stopped === null ? waiting.condition() : "writer thread stopped"),
    async close() {
      if (closed) return;
      closed = true;
      // A thread blocked on the disk (a frozen file system) or a lock must not hold a shutdown:
      // past the write timeout its unanswered writes fail and the thread is left to the exit.
      if (stopped === null && !(await stopsWithin(worker, exited, options.writeTimeoutMs))) {
        stopped = "was stopped by close() while blocked";
        waiting.rejectAll(unavailable);
      }
      await local.close();
    },
  } as Storage;
  threads.set(storage, {
    worker,
    ready,
    get groups() {
      return groups;
    },
  });
  return storage;
}

const unavailable = () => new StorageUnavailableError("writer thread stopped", "WRITER_THREAD_STOPPED");
const full = () => new StorageUnavailableError("too many writes waiting for the writer thread", "WRITER_THREAD_FULL");

/** A promise settled from outside: the thread's readiness, awaited by openSqliteStorage only (a death is reported by every write). */
function settleLater() {
  let resolve: () => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Asks the thread to finish its queue and stop; false (and the thread terminated) when it did not within `ms`. */
async function stopsWithin(worker: Worker, exited: Promise<void>, ms: number): Promise<boolean> {
  worker.ref();
  worker.postMessage({ type: "close" } satisfies ToWriter);
  if (await settlesWithin(exited, ms)) return true;
  worker.unref();
  void worker.terminate();
  return false;
}

/** decision D53: a write call, with the audit event pending in the caller's scope (the thread appends it with the write). */
function callMessage(id: number, slot: number, store: string, method: string, args: unknown[]): ToWriter {
  const audit = store === "audit" ? undefined : takeAuditEvent();
  return { type: "call", id, slot, store, method, args, ...(audit ? { audit } : {}) };
}

/** Whether `promise` settled within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

type Send = (store: string, method: string, args: unknown[]) => Promise<unknown>;
type AnyStore = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** Every store of `local` with its reads bound to `local` and its writes sent to the writer thread. */
function routeStores(local: Storage, send: Send): Record<string, AnyStore> {
  const stores: Record<string, AnyStore> = {};
  for (const [name, methods] of Object.entries(METHOD_ACCESS) as [string, Record<string, MethodAccess>][]) {
    const target = (local as unknown as Record<string, AnyStore | undefined>)[name];
    if (target === undefined) continue;
    stores[name] = Object.fromEntries(
      Object.entries(methods)
        .filter(([method]) => typeof target[method] === "function")
        .map(([method, access]) => [method, access === "read" ? target[method]!.bind(target) : (...args: unknown[]) => send(name, method, args)]),
    );
  }
  return stores;
}

/**
 * The worker's file next to this module: `writer-thread.ts` when running from source (tests,
 * tsx), the built `adapters/sqlite-writer.js` from the package (tsup's `workerEntries`), which is
 * one folder up or down depending on whether this code landed in an entry or a shared chunk.
 */
function writerEntry(): URL {
  if (import.meta.url.endsWith(".ts")) return new URL("./writer-thread.ts", import.meta.url);
  const candidates = ["./adapters/sqlite-writer.js", "./sqlite-writer.js"].map((path) => new URL(path, import.meta.url));
  const found = candidates.find((url) => existsSync(url));
  if (!found) throw new Error("runplane sqlite: the writer thread's file adapters/sqlite-writer.js is missing from the build");
  return found;
}

/** Option `writerScript`: a `file:` URL, as a URL or a string, or a path. */
const scriptUrl = (script: string | URL): URL => (script instanceof URL ? script : script.startsWith("file:") ? new URL(script) : pathToFileURL(script));

function startWorker(start: WriterStart, entry: URL): Worker {
  if (!entry.pathname.endsWith(".ts")) return new Worker(entry, { workerData: start });
  // From source (tests, tsx) the thread needs tsx to load TypeScript. On Node 20 an `--import tsx`
  // in execArgv does not reach a worker's entry, so a small script registers tsx, then imports it.
  const tsx = new URL("dist/esm/api/index.mjs", pathToFileURL(createRequire(import.meta.url).resolve("tsx/package.json")));
  const script = `import(${JSON.stringify(tsx.href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(script, { eval: true, workerData: start });
}
