import { ago } from "../../src/domain/hosts.js";
import type { Storage } from "../../src/index.js";
import { isConnected, readPoolPresence, type PoolPresence } from "../../src/services/pool-presence.js";
import { inspectDatabase } from "./check-storage.js";
import type { CheckInput, Verdict } from "./check-types.js";
import { DEMO } from "./demo.js";

/** Under `ok   agents: `, so each pool's line starts below the note's first word. */
const INDENT = "       ";
/** Agents listed per pool; the rest are counted. */
const SHOWN = 10;

/**
 * decision D34: the agent pools, each with its agents (connected to any host or not)
 * and the deliveries waiting for one of them (`doctor`). A pool without an agent is shown, not an
 * error; a pool whose deliveries wait while none of its agents is connected is a warning naming the
 * pool and how long they waited (found from outside: `ok agents` with 10 waiting 4 minutes).
 */
export async function agentsCheck({ config, problems }: CheckInput): Promise<Verdict> {
  if (problems.some((p) => p.variable === "DATABASE_URL" || p.variable === "DATABASE_SCHEMA")) return { skip: "not checked: the database settings are not valid (see options)" };
  const note = await inspectDatabase(config, async (db) => {
    const storage = await db.storage();
    return storage ? agentsVerdict(storage, new Date()) : null;
  });
  return note ?? { note: "none recorded yet (the database is new, or its migrations are pending)" };
}

/** The agents line: a warning first naming each pool whose deliveries wait with no agent connected. */
export async function agentsVerdict(storage: Storage, now: Date): Promise<Verdict> {
  const { note, stalled } = await agentsReport(storage, now);
  return stalled.length === 0 ? { note } : { warn: [...stalled, note].join("\n") };
}

/** One line per pool (the demo organization's and any with deliveries waiting), one per agent. */
export async function agentsNote(storage: Storage, now: Date): Promise<string> {
  return (await agentsReport(storage, now)).note;
}

async function agentsReport(storage: Storage, now: Date): Promise<{ note: string; stalled: string[] }> {
  const waiting = (await storage.taskDeliveries.waitingByPool?.(now.toISOString(), 100)) ?? [];
  const ids = new Set([...(await storage.agentPools.listByOrganization(DEMO.organization)).map((p) => p.id), ...waiting.map((w) => w.agentPoolId)]);
  const pools = (await Promise.all([...ids].map((id) => readPoolPresence(storage, id, now)))).filter((p): p is PoolPresence => p !== null);
  if (pools.length === 0) return { note: "no agent pools", stalled: [] };
  const stalled: string[] = [];
  const lines = pools.flatMap((p) => {
    const backlog = waiting.find((w) => w.agentPoolId === p.pool.id);
    const connected = p.agents.filter((a) => isConnected(a, now.getTime())).length;
    const queue = backlog ? `${backlog.due} ${backlog.due === 1 ? "delivery" : "deliveries"} waiting, the oldest due ${ago(backlog.oldestDueAt, now)}` : "no delivery waiting";
    const agents = p.agents.length === 0 ? "no agent registered" : `${p.agents.length} agent${p.agents.length === 1 ? "" : "s"}, ${connected} connected`;
    if (backlog && connected === 0) {
      stalled.push(`pool "${p.pool.name}" (${p.pool.id}): ${queue}, and no agent of the pool is connected; start one (runplane agent) or check why its agents stopped`);
    }
    const head = `${INDENT}pool "${p.pool.name}" (${p.pool.id}): ${agents}; ${queue}`;
    const shown = [...p.agents].sort((a, b) => (a.lastPingAt < b.lastPingAt ? 1 : -1)).slice(0, SHOWN);
    const rows = shown.map((a) => `${INDENT}  ${a.name ?? "(no name)"} (${a.id}): ${isConnected(a, now.getTime()) ? a.status : a.status === "exited" ? "exited" : "unknown"}, last seen ${ago(a.lastPingAt, now)}`);
    const more = p.agents.length > SHOWN ? [`${INDENT}  and ${p.agents.length - SHOWN} more`] : [];
    return [head, ...rows, ...more];
  });
  return { note: [`${pools.length} pool${pools.length === 1 ? "" : "s"}`, ...lines].join("\n"), stalled };
}
