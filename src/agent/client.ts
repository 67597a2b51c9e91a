/**
 * The agent's side of the agent protocol (decision D34): plain JSON over HTTP(S) to the runplane
 * origin, the agent token as `Authorization: Bearer`. Outbound only; nothing listens.
 */

/** An answer the agent cannot go on from: the token was refused (revoked, or never valid). */
export class AgentRefusedError extends Error {
  constructor(readonly status: number) {
    super(`runplane refused the agent token (${status})`);
    this.name = "AgentRefusedError";
  }
}

/** A request that did not get a usable answer (network, 5xx, 429): worth trying again later. */
export class AgentCallError extends Error {
  constructor(readonly status: number | null, readonly code: string | null) {
    super(status === null ? `runplane could not be reached${code ? ` (${code})` : ""}` : `runplane answered ${status}`);
    this.name = "AgentCallError";
  }
}

export interface ClientOptions {
  /** The runplane origin (`https://runplane.example.com`); the protocol lives under `/api/agent/v1/`. */
  url: string;
  token: string;
  fetch?: typeof fetch;
  /**
   * How long a call may go without an answer, beyond the wait it asks for (`wait-ms`,
   * `next-wait-ms`), in ms. Default 15 s: a silent network (a partition) fails the call and the
   * agent tries again, rather than waiting for the HTTP client's own five minutes.
   */
  requestTimeoutMs?: number;
}

/** A bare error code of a failed fetch (ECONNREFUSED), never its message. */
function codeOf(err: unknown): string | null {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  const code = cause?.code ?? (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z0-9_]{1,40}$/.test(code) ? code : null;
}

export function createAgentClient(options: ClientOptions) {
  const base = new URL("/api/agent/v1/", options.url);
  const send = options.fetch ?? fetch;
  const headers = { authorization: `Bearer ${options.token}`, "content-type": "application/json" };

  /** POSTs `body` to `path`: the answer's status and JSON (null for none); throws on 401 and on no usable answer. */
  async function call(path: string, body: unknown, signal?: AbortSignal): Promise<{ status: number; json: unknown }> {
    let res: Response;
    let text: string;
    const waits = body as { "wait-ms"?: number; "next-wait-ms"?: number };
    const timeout = AbortSignal.timeout((options.requestTimeoutMs ?? 15_000) + (waits["wait-ms"] ?? waits["next-wait-ms"] ?? 0));
    try {
      res = await send(new URL(path, base), { method: "POST", headers, body: JSON.stringify(body), signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      text = await res.text();
    } catch (err) {
      throw new AgentCallError(null, timeout.aborted ? "TIMEOUT" : codeOf(err));
    }
    if (res.status === 401 || res.status === 403) throw new AgentRefusedError(res.status);
    if (res.status >= 500 || res.status === 429 || res.status === 404) throw new AgentCallError(res.status, null);
    let json: unknown = null;
    if (text !== "") {
      try {
        json = JSON.parse(text) as unknown;
      } catch {
        throw new AgentCallError(res.status, null);
      }
    }
    return { status: res.status, json };
  }
  return { call };
}
export type AgentClient = ReturnType<typeof createAgentClient>;
