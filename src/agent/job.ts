import { createEgress, isEgressError, type HttpTransport, type Resolver } from "../delivery/egress.js";
import type { AgentJob } from "../schemas/agent-protocol.js";

/**
 * What the agent's egress admits unless told otherwise (decision D34): loopback and the private
 * ranges (RFC 1918, ULA), since reaching them is the agent's point. Link-local addresses and
 * metadata services stay refused unless `allow` names them.
 */
export const DEFAULT_AGENT_ALLOW = ["127.0.0.0/8", "::1", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"] as const;

export interface JobEgressOptions {
  /** Replaces {@link DEFAULT_AGENT_ALLOW}. */
  allow?: readonly string[];
  resolve?: Resolver;
  /** decision D38: `"status"` (default) keeps only the status line of an answer from a non-public address. */
  excerpts?: "status" | "full";
}

/** A job's report body: the answer, or why there was none (a code, never a message). */
export type JobReport =
  | { response: { status: number; headers: Record<string, string>; body: string; "body-truncated": boolean; "body-withheld"?: boolean } }
  | { error: { code: string; reason?: string } };

/** At most 100 headers, names and values cut, as the host accepts them. */
function boundedHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers).slice(0, 100)) out[name.slice(0, 256)] = String(value).slice(0, 8 * 1024);
  return out;
}

/** Sends jobs through the agent's own guarded egress, one transport per attempt budget. */
export function createJobRunner(options: JobEgressOptions) {
  const transports = new Map<number, HttpTransport>();
  const transportFor = (timeoutMs: number): HttpTransport => {
    let t = transports.get(timeoutMs);
    if (!t) {
      const allow = options.allow ?? DEFAULT_AGENT_ALLOW;
      // Whole private ranges are the agent's job; metadata and link-local addresses are not (D38).
      t = createEgress({ allow, wide: true, keepNeverRefused: true, timeoutMs, ...(options.resolve ? { resolve: options.resolve } : {}), ...(options.excerpts ? { excerpts: options.excerpts } : {}) });
      transports.set(timeoutMs, t);
    }
    return t;
  };
  // A wrong allowlist entry fails here, when the agent starts, not at its first job.
  transportFor(10_000);
  return {
    /** Sends `job` as given (the host built and signed it) and resolves what to report. */
    async run(job: AgentJob, signal?: AbortSignal): Promise<JobReport> {
      try {
        const res = await transportFor(job["timeout-ms"]).send({ url: job.url, headers: job.headers, body: Buffer.from(job.body, "base64"), ...(signal ? { signal } : {}) });
        return {
          response: { status: res.status, headers: boundedHeaders(res.headers), body: res.body, "body-truncated": res.bodyTruncated, ...(res.bodyWithheld ? { "body-withheld": true } : {}) },
        };
      } catch (err) {
        if (!isEgressError(err)) return { error: { code: "network" } };
        const code = /\(([A-Z0-9_]{1,40})\)/.exec(err.message)?.[1];
        const reason = err.code === "refused-url" || err.code === "refused-address" ? err.reason : code;
        return { error: { code: err.code, ...(reason && /^[A-Za-z0-9_ -]{1,60}$/.test(reason) ? { reason } : {}) } };
      }
    },
    async close(): Promise<void> {
      await Promise.all([...transports.values()].map((t) => t.close()));
    },
  };
}
