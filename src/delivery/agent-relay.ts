/**
 * decision D34: a pool task's verification through an agent polling ANOTHER host, over the
 * storage's relay (`Storage.relay`: PostgreSQL NOTIFY). The host serving the API request asks
 * (`ask`), every host with an agent of the pool waiting says so (`can`), the asking host picks the
 * first (`go`, with the built, signed request), and that host sends it through its agent and
 * answers (`answer`). One integration request per verification, whichever host serves the API.
 */
import type { AgentHub } from "../services/agent-hub.js";
import type { MessageRelay } from "../storage/notifications.js";
import { RELAY_MAX_CHARS } from "../storage/notifications.js";
import { isAgentUnavailable } from "./agent-transport.js";
import { EGRESS_ERROR_CODES, EgressError, type EgressErrorCode } from "./egress-error.js";
import type { HttpRequest, HttpResponse } from "./transport.js";

type Message =
  | { t: "ask"; id: string; pool: string }
  | { t: "can"; id: string; host: string }
  | { t: "go"; id: string; host: string; pool: string; url: string; headers: Record<string, string>; body: string }
  | { t: "answer"; id: string; status?: number; headers?: Record<string, string>; body?: string; error?: { code: string; message: string } };

/** Of an answer's body, what the relay carries: the verification's 422 quotes a few words of it at most. */
const ANSWER_BODY_CHARS = 2_048;

interface Waiting {
  pool: string;
  onCan(host: string): void;
  onAnswer(m: Extract<Message, { t: "answer" }>): void;
}

/**
 * No agent of the pool took a relayed request: `nowhere`, no host has one connected (none answered
 * the ask within its wait); `busy`, the host that has one found none free in time.
 */
export class RelayUntakenError extends Error {
  constructor(readonly why: "nowhere" | "busy") {
    super(why === "nowhere" ? "no host has an agent of the pool connected" : "the agents of the pool are busy");
    this.name = "RelayUntakenError";
  }
}

/** The answer's error code of a host whose agents were all busy (not an egress code). */
const BUSY = "agents-busy";

export interface AgentRelay {
  /**
   * Sends `req` through an agent of `pool` connected to another host; rejects when none answers
   * within `waitMs`, with a {@link RelayUntakenError} when no host offers one within `askMs` or the
   * one that did found its agents busy.
   */
  send(req: HttpRequest, pool: string, waitMs: number, askMs?: number): Promise<HttpResponse>;
  stop(): Promise<void>;
}

const parse = (text: string): Message | null => {
  try {
    const m = JSON.parse(text) as Message;
    return typeof m === "object" && m !== null && typeof m.id === "string" ? m : null;
  } catch {
    return null;
  }
};

/** Answers other hosts' asks with this host's agents, and sends this host's verifications through theirs. */
export function createAgentRelay(
  relay: MessageRelay,
  hub: AgentHub,
  /** Sends through an agent of the pool connected here (waiting a moment for one to poll). */
  sendHere: (req: HttpRequest, pool: string) => Promise<HttpResponse>,
  hostId: string,
  newId: () => string,
): AgentRelay {
  const waiting = new Map<string, Waiting>();
  const publish = (m: Message): Promise<void> => relay.publish(JSON.stringify(m)).catch(() => undefined);

  /** Another host's `go`: sent through an agent waiting here, answered with what it reported. */
  async function serve(m: Extract<Message, { t: "go" }>): Promise<void> {
    try {
      const res = await sendHere({ url: m.url, headers: m.headers, body: Buffer.from(m.body, "base64") }, m.pool);
      const body = res.body.length > ANSWER_BODY_CHARS ? res.body.slice(0, ANSWER_BODY_CHARS) : res.body;
      await publish({ t: "answer", id: m.id, status: res.status, headers: { "content-type": res.headers["content-type"] ?? "" }, body });
    } catch (err) {
      const code = err instanceof EgressError ? err.code : isAgentUnavailable(err) && err.why === "no-agent" ? BUSY : "network";
      await publish({ t: "answer", id: m.id, error: { code, message: err instanceof Error ? err.message.slice(0, 200) : "error" } });
    }
  }

  const onMessage = (text: string): void => {
    const m = parse(text);
    if (!m) return;
    if (m.t === "ask" && hub.connected(m.pool)) void publish({ t: "can", id: m.id, host: hostId });
    else if (m.t === "go" && m.host === hostId) void serve(m);
    else if (m.t === "can") waiting.get(m.id)?.onCan(m.host);
    else if (m.t === "answer") waiting.get(m.id)?.onAnswer(m);
  };
  const subscribed = relay.subscribe(onMessage).catch(() => null);

  return {
    send(req, pool, waitMs, askMs = waitMs) {
      const id = newId();
      const body = Buffer.from(typeof req.body === "string" ? Buffer.from(req.body, "utf8") : req.body).toString("base64");
      return new Promise<HttpResponse>((resolve, reject) => {
        let chosen: string | null = null;
        const done = (): void => (clearTimeout(timer), clearTimeout(asked), void waiting.delete(id));
        const timer = setTimeout(() => (done(), reject(new EgressError("timeout", "no agent of the pool answered on any host"))), waitMs);
        // Every host with an agent of the pool answers the ask at once: none by `askMs`, none has one.
        const asked = setTimeout(() => void (chosen === null && (done(), reject(new RelayUntakenError("nowhere")))), askMs);
        waiting.set(id, {
          pool,
          onCan(host) {
            if (chosen !== null) return;
            chosen = host;
            const go: Message = { t: "go", id, host, pool, url: req.url, headers: req.headers, body };
            if (JSON.stringify(go).length > RELAY_MAX_CHARS) return void (done(), reject(new EgressError("network", "the request is too large to relay")));
            void publish(go);
          },
          onAnswer(m) {
            done();
            if (m.error?.code === BUSY) return reject(new RelayUntakenError("busy"));
            const code: EgressErrorCode = EGRESS_ERROR_CODES.includes(m.error?.code as EgressErrorCode) ? (m.error!.code as EgressErrorCode) : "network";
            if (m.error || m.status === undefined) return reject(new EgressError(code, m.error?.message ?? "no answer"));
            resolve({ status: m.status, headers: m.headers ?? {}, body: m.body ?? "", bodyTruncated: (m.body ?? "").length >= ANSWER_BODY_CHARS });
          },
        });
        void subscribed.then(() => publish({ t: "ask", id, pool }));
      });
    },
    async stop() {
      for (const w of waiting.keys()) waiting.delete(w);
      const stop = await subscribed;
      await stop?.();
    },
  };
}
