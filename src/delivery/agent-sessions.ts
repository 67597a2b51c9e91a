import { invalid, quote } from "../errors.js";
import { outsideRequestDeadline } from "../storage/request-deadline.js";
import { AGENT_POOL_POINTER } from "../services/task-agent-pools.js";
import type { RunTaskUrls } from "../domain/run-task-request.js";
import type { Dialect } from "../schemas/common.js";
import type { AgentHub } from "../services/agent-hub.js";
import type { AgentSessions } from "../services/agent-sessions.js";
import { parseOutboundUrl, type EgressPolicy } from "./address-policy.js";
import { RelayUntakenError, type AgentRelay } from "./agent-relay.js";
import { createAgentTransport, isAgentUnavailable, type AgentTransportOptions } from "./agent-transport.js";
import type { HttpRequest, HttpResponse, HttpTransport } from "./transport.js";
import { createTaskEndpointCheck } from "./verification.js";

/** How long a verification waits for an agent of the pool to be free on this host, in ms. */
export const VERIFY_WAIT_MS = 5_000;

/**
 * decision D34: the URL rules the platform applies to a pool task's URL: the scheme and no userinfo.
 * Its addresses are the agent's to judge (its own egress, inside the private network).
 */
const POOL_URL_POLICY: EgressPolicy = {
  checkUrl: parseOutboundUrl,
  checkAddress: () => ({ ok: true }),
};

/** How long a verification relayed to another host may take: a wait for its agent, the attempt, the relay. */
const RELAYED_WAIT_MS = VERIFY_WAIT_MS + 15_000;

/**
 * Sends `req` through an agent of `poolId` connected here; one between two polls is given a moment
 * to wait again, within one bound of VERIFY_WAIT_MS for an agent to take it (not one per try).
 */
export async function sendHere(hub: AgentHub, agents: HttpTransport, req: HttpRequest, poolId: string): Promise<HttpResponse> {
  const until = Date.now() + VERIFY_WAIT_MS;
  for (let tries = 0; ; tries++) {
    await agentWaiting(hub, poolId, Math.max(0, until - Date.now()));
    try {
      return await agents.send({ ...req, agentPoolId: poolId });
    } catch (err) {
      if (!isAgentUnavailable(err) || err.why !== "no-agent" || tries > 0 || Date.now() >= until) throw err;
    }
  }
}

/** Resolves once an agent of `pool` waits here, or after `ms` (whichever first). */
function agentWaiting(hub: AgentHub, pool: string, ms: number): Promise<void> {
  if ((hub.idle().get(pool) ?? 0) > 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => (clearTimeout(timer), stop(), resolve());
    const timer = setTimeout(done, ms);
    const stop = hub.onIdle(() => void ((hub.idle().get(pool) ?? 0) > 0 && done()));
  });
}

export interface AgentSessionOptions extends AgentTransportOptions {
  urls: RunTaskUrls;
  dialect: Dialect;
  userAgent: string;
  now: () => Date;
  /**
   * With several hosts (`Storage.relay`): whether an agent of a pool is connected to any host (its
   * stored reports), and the relay that sends a verification through an agent of another host.
   */
  elsewhere?: { connected(poolId: string): Promise<boolean>; relay: AgentRelay };
}

/**
 * The `AgentSessions` of this host: a pool is connected while one of its agents polls here, and a
 * pool task's verification request (D15) is sent as a job through one of them, answered as the
 * direct one is (422 unless exactly 200).
 */
export function createAgentSessions(hub: AgentHub, options: AgentSessionOptions): AgentSessions {
  const agents = createAgentTransport(hub, options);
  const elsewhere = options.elsewhere;
  return {
    connected: (poolId) => hub.connected(poolId),
    ...(elsewhere ? { connectedElsewhere: (poolId: string) => elsewhere.connected(poolId) } : {}),
    checkEndpoint(poolId, endpoint, pointer, poolName = poolId) {
      const transport = {
        async send(req: HttpRequest): Promise<HttpResponse> {
          const untaken = (why: string) =>
            invalid(AGENT_POOL_POINTER, `no agent of pool ${quote(poolName)} (${poolId}) took the verification request within ${VERIFY_WAIT_MS / 1000} s: ${why}`);
          // decision D34: no agent of the pool here, one on another host: through that host. Which
          // it was when none took it: no host had one connected, or the one that had found them busy.
          if (elsewhere && !hub.connected(poolId)) {
            try {
              return await elsewhere.relay.send(req, poolId, RELAYED_WAIT_MS, VERIFY_WAIT_MS);
            } catch (err) {
              if (!(err instanceof RelayUntakenError)) throw err;
              throw untaken(err.why === "busy" ? "its agents are busy" : "none of its agents is connected on any host");
            }
          }
          try {
            return await sendHere(hub, agents, req, poolId);
          } catch (err) {
            // decision D34: no agent took it is not a failed connection to the URL: say which it was.
            if (!isAgentUnavailable(err) || err.why !== "no-agent") throw err;
            throw untaken(hub.connected(poolId) ? "its agents are busy" : "none of its agents is connected");
          }
        },
        close: async () => undefined,
      };
      const check = createTaskEndpointCheck({ transport, policy: POOL_URL_POLICY, urls: options.urls, dialect: options.dialect, userAgent: options.userAgent, now: options.now });
      // decision D34: the wait for an agent is not storage time; it has its own bound (VERIFY_WAIT_MS).
      return outsideRequestDeadline(() => check(endpoint, pointer));
    },
  };
}
