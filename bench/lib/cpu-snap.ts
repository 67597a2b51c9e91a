import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time (user + system) of the bench's processes: read from `/proc` (Linux only; nothing
 * elsewhere) for other processes, from `process.cpuUsage` for this one. CPU is the gauge machine
 * noise moves least: time spent waiting for a core is not in it.
 */

const TICKS_PER_SECOND = 100;

/** utime + stime of `pid` in seconds; throws when it is gone. */
function secondsOf(pid: number | string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

/**
 * This process's CPU (user + system, all threads) from now until the returned function is called,
 * in microseconds. With --expose-gc a full GC runs first, uncounted, so no window pays for the
 * previous one's garbage; collections during the window count. None closes it: a full GC costs in
 * proportion to the live heap (64 ms growing to 220 ms over five memory-adapter samples here), not
 * to the window's garbage, and would weigh on a cheap baseline most.
 */
export function cpuWindow(): () => number {
  gc();
  const start = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(start);
    return used.user + used.system;
  };
}

/** Every PostgreSQL process of the machine: the postmaster's children (backends, WAL writer, ...) name themselves `postgres: ...`. */
export function postgresPids(): number[] {
  const pids: number[] = [];
  try {
    for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("postgres")) pids.push(Number(pid));
      } catch {
        // Ended between the listing and the read.
      }
    }
  } catch {
    // Not Linux: none.
  }
  return pids;
}

/** CPU seconds (user + system) each live process of `pids` has used so far, from `/proc`. */
export function cpuOfPids(pids: Iterable<number>): Map<number, number> {
  const used = new Map<number, number>();
  for (const pid of pids) {
    try {
      used.set(pid, secondsOf(pid));
    } catch {
      // Ended (or not Linux): nothing to count.
    }
  }
  return used;
}

/**
 * CPU seconds spent between two {@link cpuOfPids} readings: a process absent before started in
 * between and counts from zero; one absent after ended and its last stretch is lost.
 */
export function cpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}
