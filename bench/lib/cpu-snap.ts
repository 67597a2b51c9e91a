import { readdirSync, readFileSync } from "node:fs";

/** CPU seconds (user + system) used so far, per kind of process on this machine. */
export type CpuSnapshot = Map<string, number>;

const TICKS_PER_SECOND = 100;

/** What a process is, from its command line: the PostgreSQL server, a bench host, the receiver. */
function kindOf(cmdline: string): string | null {
  if (cmdline.startsWith("postgres")) return "postgres";
  if (cmdline.includes("postgres-host.ts")) return "hosts";
  if (cmdline.includes("receiver.ts")) return "receiver";
  return null;
}

/**
 * Reads `/proc` (Linux only; empty elsewhere): how the CPU of a fan-out splits between the hosts,
 * PostgreSQL and the receiver is the gauge that machine noise moves least (issue 14).
 */
export function cpuSnapshot(): CpuSnapshot {
  const used: CpuSnapshot = new Map();
  let pids: string[] = [];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return used;
  }
  for (const pid of pids) {
    try {
      const kind = kindOf(readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " "));
      if (!kind) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      used.set(kind, (used.get(kind) ?? 0) + (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return used;
}

/** CPU seconds per 10,000 deliveries between two snapshots, e.g. `hosts 3.1 s, postgres 2.2 s`. */
export function cpuPer10k(before: CpuSnapshot, after: CpuSnapshot, deliveries: number): string {
  return ["hosts", "postgres", "receiver"]
    .map((kind) => `${kind} ${((((after.get(kind) ?? 0) - (before.get(kind) ?? 0)) * 10_000) / deliveries).toFixed(2)} s`)
    .join(", ");
}
