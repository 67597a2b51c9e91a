import type { JobResult } from "../schemas/agent-protocol.js";
import type { AgentHub } from "../services/agent-hub.js";
import { EgressError, refusal } from "./egress-error.js";
import type { HttpRequest, HttpResponse, HttpTransport } from "./transport.js";

/**
 * decision D34: thrown when no agent took or reported a job in time (none waiting, one that crashed,
 * stalled, was cut off or revoked). The attempt did not happen as far as the host knows: the row
 * is released, not failed (no attempt counted, no backoff), so another agent gets it at once; a
 * job an agent held and never reported (`agent` set) is an attempt of its own (decision D45).
 */
export class AgentUnavailableError extends Error {
  /** decision D45: `agent` held the job and never reported (the request may have reached the integration). */
  constructor(readonly why: "no-agent" | "lost", readonly agent?: { id: string; name: string | null }) {
    super(why === "no-agent" ? "no agent of the pool is waiting" : "the agent did not report the job in time");
    this.name = "AgentUnavailableError";
  }
}
export const isAgentUnavailable = (err: unknown): err is AgentUnavailableError => err instanceof Error && err.name === "AgentUnavailableError";

/** Options of {@link createAgentTransport}. */
export interface AgentTransportOptions {
  /** An attempt's budget, enforced by the agent's egress. Default 10 s, as the platform's (D15). */
  timeoutMs?: number;
  /** How much longer the host waits for the report before it releases the row. Default 3 s. */
  marginMs?: number;
}

/** decision D34: the agent that reported an error, carried on the error for the attempt's record. */
export const agentOf = (err: unknown): string | undefined => {
  const id = (err as { agentId?: unknown } | null)?.agentId;
  return typeof id === "string" ? id : undefined;
};

/**
 * The agent's error as the platform's own egress would have raised it, in the host's fixed words:
 * nothing the agent wrote is quoted but a refusal reason or a bare error code.
 */
function toError(error: NonNullable<JobResult["error"]>, timeoutMs: number): Error {
  const code = error.reason && /^[A-Z0-9_]{1,40}$/.test(error.reason) ? ` (${error.reason})` : "";
  switch (error.code) {
    case "refused-url":
    case "refused-address":
      return refusal(error.code, error.reason ?? "reserved");
    case "timeout":
      return new EgressError("timeout", `request timed out after ${timeoutMs} ms`);
    case "dns-failure":
      return new EgressError("dns-failure", `name resolution failed${code}`);
    case "network":
      return new EgressError("network", `network error${code}`);
    case "aborted":
      // The agent stopped mid-request: as if it never had the job.
      return new AgentUnavailableError("lost");
  }
}

/** Rejects as `aborted` when `signal` fires first (a stopping dispatcher gives its rows back). */
async function abandonable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new EgressError("aborted", "request aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * An HttpTransport whose requests go out through agents (decision D34): `send` hands the built,
 * signed request of `req.agentPoolId` to a waiting agent of that pool and resolves the answer it
 * reports, or throws the EgressError it reports, or {@link AgentUnavailableError}.
 */
export function createAgentTransport(hub: AgentHub, options: AgentTransportOptions = {}): HttpTransport {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const marginMs = options.marginMs ?? 3_000;
  return {
    async send(req: HttpRequest): Promise<HttpResponse> {
      if (req.agentPoolId === undefined) throw refusal("refused-url", "agent-pool");
      if (req.signal?.aborted) throw new EgressError("aborted", "request aborted");
      const outcome = await abandonable(hub.dispatch(req.agentPoolId, { url: req.url, headers: req.headers, body: req.body, timeoutMs, marginMs, ...(req.handing ? { handing: req.handing } : {}) }), req.signal);
      if (!outcome.ok) throw outcome.reason === "lost" ? new AgentUnavailableError("lost", outcome.agent) : new AgentUnavailableError("no-agent");
      const { response, error } = outcome.result;
      if (error) throw Object.assign(toError(error, timeoutMs), { agentId: outcome.agentId });
      const r = response!;
      return {
        status: r.status,
        // Lower case, as the direct egress gives them (Retry-After is read as `retry-after`).
        headers: Object.fromEntries(Object.entries(r.headers).map(([name, value]) => [name.toLowerCase(), value])),
        body: r["body-withheld"] ? "" : r.body,
        bodyTruncated: r["body-withheld"] ? false : r["body-truncated"],
        ...(r["body-withheld"] ? { bodyWithheld: true } : {}),
        agentId: outcome.agentId,
      };
    },
    close: async () => undefined,
  };
}
