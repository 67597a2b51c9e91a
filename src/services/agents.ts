import { ApiError, badRequest, conflict, invalid, notFound, quote } from "../errors.js";
import { createAgentRecords } from "./agent-records.js";
import { audited, changesOf } from "./audit.js";
import { AgentRegistrationSchema, type AgentRecord, type AgentRegistration, type AgentStatus, type AgentView } from "../schemas/agents.js";
import type { AgentPool } from "../schemas/directory.js";
import type { Page, PageRequest } from "../schemas/records.js";
import { AGENT_SILENT_MS } from "./agent-hub.js";
import { checkPage } from "./agent-tokens.js";
import { isoNow, type ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";

/** HCP Terraform's filter name, which go-tfe sends (`AgentListOptions.LastPingSince`). */
export const LAST_PING_SINCE = "filter[last-ping-since]";

export interface AgentListOptions {
  /** Default: the first 20. `limit` 1..100. */
  page?: PageRequest;
  /** Only agents that reported at or after this ISO 8601 / RFC 3339 instant (an offset is fine). */
  lastPingSince?: string;
}

/**
 * A date-time with a zone (`Z` or an offset: go-tfe writes a local time with its offset), or a
 * date alone (midnight UTC); seconds and their fraction optional.
 */
const INSTANT = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:?\d\d))?$/i;

/** decision D9: `value` as the core's UTC ISO-8601 string, so the store compares it as text; 400 otherwise. */
export function parseLastPingSince(value: string): string {
  const ms = INSTANT.test(value) && existsOnCalendar(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw badRequest(`${LAST_PING_SINCE} must be an ISO 8601 date-time such as 2020-08-11T10:41:23Z, not ${quote(value)}`, LAST_PING_SINCE);
  return new Date(ms).toISOString();
}

/** Date.parse rolls 2026-02-30 over to 2 March and takes 24:00: a date or time that does not exist is refused instead. */
function existsOnCalendar(value: string): boolean {
  const [year, month, day] = [value.slice(0, 4), value.slice(5, 7), value.slice(8, 10)].map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  const hour = value.length > 10 ? Number(value.slice(11, 13)) : 0;
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour <= 23;
}

/**
 * decision D34: an agent running (`idle`, `busy`) that has not reported for AGENT_SILENT_MS reads
 * `unknown`, judged when read: a host that saw it last may be gone, and its stored status then
 * never changes. Its reports are written at least every 15 s while it runs.
 */
const statusAt = (r: AgentRecord, now: number): AgentRecord["status"] =>
  (r.status === "idle" || r.status === "busy") && now - Date.parse(r.lastPingAt) > AGENT_SILENT_MS ? "unknown" : r.status;

const toView = (r: AgentRecord, pool: AgentPool, now: number): AgentView => ({ ...r, status: statusAt(r, now), organization: pool.organization });

/**
 * The agents of agent pools (decision D34): listed and shown by the API, registered and updated by
 * the agent protocol, which is their only writer (tests stand in for it).
 */
export function createAgentService(ctx: ServiceContext) {
  const s = ctx.storage;
  const records = createAgentRecords(ctx);
  const poolOf = async (agentPoolId: string): Promise<AgentPool> => {
    const pool = await s.agentPools.get(agentPoolId);
    if (!pool) throw notFound();
    return pool;
  };
  /** An agent and its pool; an agent whose pool is gone counts as missing. */
  const load = async (id: string): Promise<AgentView> => {
    const record = await s.agents.get(id);
    const pool = record ? await s.agentPools.get(record.agentPoolId) : null;
    if (!record || !pool) throw notFound();
    return toView(record, pool, ctx.now().getTime());
  };

  return {
    /** One page of a pool's agents by first connection; 404 for an unknown pool. */
    async list(agentPoolId: string, options: AgentListOptions = {}): Promise<Page<AgentView>> {
      const pool = await poolOf(agentPoolId);
      const since = options.lastPingSince === undefined ? {} : { lastPingSince: parseLastPingSince(options.lastPingSince) };
      const page = await s.agents.listByPool(pool.id, since, checkPage(options.page ?? { offset: 0, limit: 20 }));
      const at = ctx.now().getTime();
      return { items: page.items.map((r) => toView(r, pool, at)), total: page.total };
    },

    get: load,

    /**
     * Records an agent of `agentPoolId` that just connected with agent token `tokenId` of that pool
     * (a token of another pool is refused): a new `agent-` id, its first report now.
     */
    async register(agentPoolId: string, input: AgentRegistration): Promise<AgentView> {
      const pool = await poolOf(agentPoolId);
      const agent = parseOrThrow(AgentRegistrationSchema, input, "");
      const token = await s.agentTokens.get(agent.tokenId);
      if (!token || token.agentPoolId !== pool.id) throw invalid("/tokenId", `agent token ${quote(agent.tokenId)} is not a token of agent pool ${pool.id}`);
      await records.makeRoom(pool, agent.tokenId);
      const now = isoNow(ctx);
      const record: AgentRecord = { id: ctx.newId("agent"), agentPoolId: pool.id, ...agent, lastPingAt: now, createdAt: now };
      // decision D53: the registration is recorded with the agent, in its transaction.
      const draft = { organization: pool.organization, resource: { type: "agent", id: record.id }, action: "register", changes: changesOf(null, record, ["agentPoolId", "tokenId", "name"] as const) };
      if (!(await audited(ctx, draft, () => s.agents.insert(record)))) throw new ApiError("internal");
      return toView(record, pool, ctx.now().getTime());
    },

    /**
     * decision D46, as HCP Terraform: removes an agent that is `unknown` (silent), `errored` or
     * `exited`; one that is `idle` or `busy` is 409. Its attempts keep naming its id.
     */
    async remove(id: string): Promise<void> {
      const agent = await load(id);
      if (agent.status === "idle" || agent.status === "busy") {
        throw conflict(`agent ${id} is ${agent.status}: only an agent that is unknown, errored or exited can be deleted (stop it first)`);
      }
      // decision D53: the delete is recorded with its actor, in the delete's own transaction.
      const draft = { organization: agent.organization, resource: { type: "agent", id }, action: "delete", changes: [{ field: "status", old: agent.status }] };
      if (!(await audited(ctx, draft, () => s.agents.delete(id)))) throw notFound();
    },

    /** decision D46: removes the agents silent for longer than `agentRecords.retention`; resolves how many. */
    prune: records.prune,

    /** An agent's report: its status now; a report older than the stored one changes nothing. */
    async report(id: string, status: AgentStatus): Promise<AgentView> {
      const current = await load(id);
      const ping = () => s.agents.ping(id, isoNow(ctx), status);
      // decision D53: an agent that exits (deregisters) is recorded; its routine reports are not.
      const exit = { organization: current.organization, resource: { type: "agent", id }, action: "deregister", changes: [{ field: "status", old: current.status, new: status }] };
      const stored = status === "exited" && current.status !== "exited" ? await audited(ctx, exit, ping) : await ping();
      if (!stored) throw notFound();
      return { ...stored, organization: current.organization };
    },
  };
}
export type AgentService = ReturnType<typeof createAgentService>;
