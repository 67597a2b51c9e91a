/**
 * What the PostgreSQL restart test (postgres-restart.test.ts) needs: a watch on the results, the
 * attempts the hosts gave up on, and its integration, a loopback receiver with two paths whose
 * `passed` callbacks go to the hosts' APIs in turn and are sent again after each 503 (decision
 * D28), as an integration should.
 *
 * - `/a` answers 200 at once; its callback waits until `open()`.
 * - `/b` holds its answer while closed (`held`), then answers 200 and calls back; every other
 *   held result is `slow`: its work ends only when the request comes again, so its callback
 *   follows that second request. Once open, `/b` answers 200 at once and calls back.
 */
import type { PostgresStorage } from "../../adapters/postgres/index.js";
import { createCallbackClient } from "../../src/integration/index.js";
import type { TaskResultRecord } from "../../src/schemas/run-task-records.js";
import { isFinal, resultsOf } from "../delivery/crash-checks.js";
import type { Behaviour, Receiver } from "../delivery/processes.js";
import type { HostProcess } from "./cluster.js";

export interface CallbackAnswer {
  resultId: string;
  status: number;
  retryAfter: string | null;
}

export interface OutageIntegration {
  /** Results whose first request was held until `open()`. */
  held: Set<string>;
  /** Of those, the ones that call back only once their request came again. */
  slow: Set<string>;
  /** Every answer a callback got, in order. */
  answers: CallbackAnswer[];
  open(): void;
  /** Resolves once every callback started so far has had an answer other than 503. */
  settled(): Promise<void>;
}

type Receive = (behaviours: Record<string, Behaviour>) => Promise<Receiver>;

const RETRY_MS = 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Samples every result until `stop()`: the first final record of each, and any change after it. */
export function watchFinal(storage: PostgresStorage, stageIds: string[]) {
  const first = new Map<string, TaskResultRecord>();
  const changed: string[] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      for (const r of await resultsOf(storage, stageIds)) {
        const f = first.get(r.id);
        if (!f && isFinal(r)) first.set(r.id, r);
        else if (f && (r.status !== f.status || r.version !== f.version)) changed.push(`${r.id}: ${f.status} -> ${r.status}`);
      }
      await sleep(100);
    }
  })();
  // A case that fails first closes the parent under the loop: that ending is not a second failure.
  loop.catch(() => undefined);
  return { first, changed, stop: () => ((on = false), loop) };
}

/** Delivery ids whose attempt a host gave up on (`run task delivery attempt failed`). */
export const failedAttempts = (hosts: HostProcess[]): Set<string> =>
  new Set(
    hosts.flatMap((h) =>
      h.stderr().split("\n").filter((l) => l.includes('"run task delivery attempt failed"')).map((l) => String(JSON.parse(l).deliveryId)),
    ),
  );

/** How many of a host's background dispatcher passes failed so far (`run task dispatcher pass failed`). */
export const failedPasses = (host: HostProcess): number => host.stderr().split("\n").filter((l) => l.includes('"run task dispatcher pass failed"')).length;

/** Starts the receiver through `receive`; callbacks go to `hostPorts()` in turn. */
export async function outageIntegration(receive: Receive, hostPorts: () => number[]): Promise<{ receiver: Receiver; integration: OutageIntegration }> {
  const held = new Set<string>();
  const slow = new Set<string>();
  const answers: CallbackAnswer[] = [];
  const calledBack = new Map<string, Promise<void>>();
  let opened = false;
  let open = (): void => undefined;
  const gate = new Promise<void>((resolve) => (open = () => ((opened = true), resolve())));
  let turn = 0;

  /** A `passed` callback for the request `body`, once per result, sent again after each 503. */
  const callBack = (body: Record<string, any>): void => {
    const id = String(body.task_result_id);
    if (calledBack.has(id)) return;
    const client = createCallbackClient({
      fetch: async (url, init) => {
        const ports = hostPorts();
        const res = await fetch(url.replace("https://runplane.example", `http://127.0.0.1:${ports[turn++ % ports.length]}`), init);
        answers.push({ resultId: id, status: res.status, retryAfter: res.headers.get("retry-after") });
        return res;
      },
    });
    const send = async (): Promise<void> => {
      for (;;) {
        const sent = await client.send(body as never, { status: "passed" }).then(
          () => true,
          (err: { status?: number }) => {
            if (err.status === 503) return false;
            // A final status a cut-off commit already stored: the test checks it follows a 503.
            if (err.status === 409) return true;
            throw err;
          },
        );
        if (sent) return;
        await sleep(RETRY_MS);
      }
    };
    const sending = send();
    // Awaited by settled(); a case that fails first must not leave an unhandled rejection.
    sending.catch(() => undefined);
    calledBack.set(id, sending);
  };

  const receiver = await receive({
    "/a": (body) => (void gate.then(() => callBack(body)), 200),
    "/b": async (body) => {
      const id = String(body.task_result_id);
      if (opened) {
        callBack(body);
        return 200;
      }
      held.add(id);
      if (held.size % 2 === 0) slow.add(id);
      await gate;
      if (!slow.has(id)) callBack(body);
      return 200;
    },
  });
  const settled = async (): Promise<void> => void (await Promise.all(calledBack.values()));
  return { receiver, integration: { held, slow, answers, open: () => open(), settled } };
}
