/**
 * The writer thread (decision D37): owns the write connection and commits every write of the main
 * thread's storage. Calls that arrive while a group commits wait in the port and form the next
 * group (`./writer-group.ts`); one message answers a group, sent after its COMMIT returned.
 */
import { parentPort, workerData } from "node:worker_threads";
import { importOptional } from "../../src/optional-peer.js";
import { withAuditEvent } from "../../src/storage/audit-scope.js";
import type { Storage } from "../../src/storage/types.js";
import { groupWritesOutside, type SqliteDatabase } from "./driver.js";
import { createSqliteStorage } from "./index.js";
import { isWriteMethod } from "./writer-methods.js";
import { countingSqlite } from "./statement-count.js";
import { sharedStatementCount } from "../sql/statement-count.js";
import { createGroupCommit } from "./writer-group.js";
import { claimSlot } from "./writer-slots.js";
import type { FromWriter, ToWriter, WriterStart } from "./writer-protocol.js";

type Call = Extract<ToWriter, { type: "call" }>;

const port = parentPort!;
const start = workerData as WriterStart;
const { default: Database } = await importOptional(() => import("better-sqlite3"), "better-sqlite3", "the SQLite writer thread");
const opened = new Database(start.path) as unknown as SqliteDatabase;
// decision D56: counted only when a test asked; otherwise the connection is used as it is.
const db = start.statementCount ? countingSqlite(opened, sharedStatementCount(start.statementCount)).db : opened;
groupWritesOutside(db);
// The main thread migrated the file before starting this thread: this only sets the pragmas.
const storage = createSqliteStorage(db, { synchronous: start.synchronous, busyTimeoutMs: start.busyTimeoutMs });
const commitGroup = createGroupCommit(db);
const slots = new Int32Array(start.slots);

const queue: Call[] = [];
let scheduled = false;
let running = false;
let closing = false;

// Messages that arrive in one turn (while the thread was busy committing, say) are all queued
// before the check phase runs `drain`: they form one group.
port.on("message", (message: ToWriter) => {
  if (message.type === "close") closing = true;
  else queue.push(message);
  if (!running && !scheduled) {
    scheduled = true;
    setImmediate(drain);
  }
});
post({ type: "ready" });

function post(message: FromWriter): void {
  port.postMessage(message);
}

async function drain(): Promise<void> {
  scheduled = false;
  running = true;
  while (queue.length > 0) {
    const calls = queue.splice(0).map((call) => ({ id: call.id, claim: () => claimSlot(slots, call.slot), run: () => invoke(call) }));
    post({ type: "group", outcomes: await commitGroup(calls) });
  }
  running = false;
  if (closing) {
    await storage.close();
    port.close();
  }
}

/** Runs one write method of the adapter; anything but a listed write is refused. */
async function invoke({ store, method, args, audit }: Call): Promise<unknown> {
  if (!isWriteMethod(store, method)) throw new TypeError(`writer thread: ${store}.${method} is not a write`);
  const target = (storage as unknown as Record<string, Record<string, (...a: unknown[]) => Promise<unknown>>>)[store]!;
  // decision D53: the caller's pending event, taken by this call's transaction as on the main thread.
  return audit ? withAuditEvent(audit, () => target[method]!(...args)) : target[method]!(...args);
}
