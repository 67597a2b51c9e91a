import { StorageUnavailableError } from "../../src/storage/unavailable.js";

interface Pending<In, Out> {
  key: string;
  input: In;
  /** decision D39: when the caller's operation must end (its request's deadline), if bounded. */
  at: number | undefined;
  resolve(value: Out): void;
  reject(error: unknown): void;
}

/**
 * Gathers the writes asked for in one turn of the event loop into one `write(batch)` call, one
 * batch at a time: what arrives while a batch is written joins the next, so a batch grows with the
 * load and the commit time. At most `max` writes and one per key go in a batch (a second write of
 * a key waits for the batch after). Each caller's promise settles with its own entry of the
 * batch's answer once the batch is stored, so a resolved write is exactly as durable as a lone one.
 *
 * decision D39: with `deadline` (the bounded pool's, `deadlineOf`), each caller keeps the deadline
 * it had when it asked: one whose deadline passed while it waited for an earlier batch is answered
 * 503 and never sent, and a batch's statement carries the earliest deadline of its callers.
 */
export function createWriteGroup<In, Out>(write: (batch: readonly In[], deadlineAt: number | undefined) => Promise<Out[]>, max: number, deadline: () => number | undefined = () => undefined) {
  let waiting: Pending<In, Out>[] = [];
  let armed = false;
  let writing = false;

  const arm = (): void => {
    if (armed || writing || waiting.length === 0) return;
    armed = true;
    // setImmediate, not a microtask: writes asked for in one poll phase all land in the batch.
    setImmediate(flush);
  };

  function take(): Pending<In, Out>[] {
    const keys = new Set<string>();
    const batch: Pending<In, Out>[] = [];
    const later: Pending<In, Out>[] = [];
    const now = Date.now();
    for (const p of waiting) {
      if (p.at !== undefined && p.at <= now) p.reject(new StorageUnavailableError("request past its deadline before its write was sent", "ETIMEDOUT"));
      else (batch.length < max && !keys.has(p.key) ? (keys.add(p.key), batch) : later).push(p);
    }
    waiting = later;
    return batch;
  }

  function flush(): void {
    armed = false;
    writing = true;
    const batch = take();
    if (batch.length === 0) {
      writing = false;
      return arm();
    }
    const ats = batch.flatMap((p) => (p.at === undefined ? [] : [p.at]));
    write(
      batch.map((p) => p.input),
      ats.length === 0 ? undefined : Math.min(...ats),
    )
      .then(
        (answers) => batch.forEach((p, i) => p.resolve(answers[i]!)),
        (error: unknown) => batch.forEach((p) => p.reject(error)),
      )
      .finally(() => {
        writing = false;
        arm();
      });
  }

  return (key: string, input: In): Promise<Out> =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ key, input, at: deadline(), resolve, reject });
      arm();
    });
}
