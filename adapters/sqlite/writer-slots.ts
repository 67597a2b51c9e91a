/**
 * decision D39: whether a write call the main thread sent to the writer thread may still run. Each
 * call in flight holds one slot of a SharedArrayBuffer; the main thread's timer and the writer
 * thread race for it with `Atomics.compareExchange`, and whoever moves it out of PENDING decides:
 * CANCELLED (the timer won: the caller is answered 503 and the thread skips the call) or RUNNING
 * (the thread won, inside its open transaction: the caller gets the thread's answer). So a call
 * answered 503 for its timeout is never run, and one that runs is awaited.
 */
const FREE = 0;
const PENDING = 1;
const RUNNING = 2;
const CANCELLED = 3;

/** Calls in flight at most: 256 KiB of slots; a call past it is refused as unavailable. */
const CAPACITY = 65_536;

/** The main thread's side: takes a slot per call, cancels, frees it when the thread answered. */
export function createCallSlots(capacity = CAPACITY) {
  const buffer = new SharedArrayBuffer(capacity * Int32Array.BYTES_PER_ELEMENT);
  const states = new Int32Array(buffer);
  const free: number[] = [];
  /** The slot of each call the thread has not answered yet. */
  const slotOf = new Map<number, number>();
  let fresh = 0;
  return {
    buffer,
    /** A slot set PENDING for call `id`, or null when every slot is in flight. */
    take(id: number): number | null {
      const slot = free.pop() ?? (fresh < capacity ? fresh++ : null);
      if (slot === null) return null;
      Atomics.store(states, slot, PENDING);
      slotOf.set(id, slot);
      return slot;
    },
    /** True when the call was still pending and now never runs; false when the thread runs it. */
    cancel: (slot: number): boolean => Atomics.compareExchange(states, slot, PENDING, CANCELLED) === PENDING,
    /** After the thread's answer for call `id` (run or skipped), or a call never sent: its slot is reused. */
    answered(id: number): void {
      const slot = slotOf.get(id);
      if (slot === undefined) return;
      slotOf.delete(id);
      Atomics.store(states, slot, FREE);
      free.push(slot);
    },
  };
}

/** The writer thread's side: true when the call is its to run (the timer did not cancel it first). */
export const claimSlot = (states: Int32Array, slot: number): boolean => Atomics.compareExchange(states, slot, PENDING, RUNNING) === PENDING;
