import type { AgentJob, JobResult } from "../schemas/agent-protocol.js";

/**
 * The agent sessions of this host (decision D34), in memory: the polls agents keep waiting here,
 * the jobs handed to them and not yet reported. The agent dispatcher hands each job to one waiting
 * poll of the row's pool; the agent's report of that job settles it. Nothing here is shared
 * between hosts: with several hosts each serves the agents polling it, and the outbox lease keeps
 * a row with one host at a time.
 */

import type { AgentSession, JobAgent, JobOutcome, JobRequest, PollEnd, Waiter } from "./agent-hub-types.js";

export type { AgentSession, JobAgent, JobOutcome, JobRequest, PollEnd } from "./agent-hub-types.js";

const agentOf = (session: AgentSession): JobAgent => ({ id: session.agentId, name: session.name ?? null });
const lostBy = (session: AgentSession): JobOutcome => ({ ok: false, reason: "lost", agent: agentOf(session) });

interface PendingJob {
  session: AgentSession;
  settle(outcome: JobOutcome): void;
}

/** An agent silent for this long is `unknown` (it may come back), in ms. */
export const AGENT_SILENT_MS = 60_000;
/** An agent seen this recently counts as connected even between two polls, in ms. */
const CONNECTED_MS = 30_000;

export interface AgentHubOptions {
  newId(prefix: string): string;
  /**
   * Called for an agent silent for {@link AGENT_SILENT_MS}, or whose poll's connection closed
   * without a new poll within {@link AGENT_GONE_GRACE_MS}: its status becomes `unknown`.
   */
  onSilent?(session: AgentSession): void;
}

interface HubState {
  sessions: Map<string, AgentSession>;
  /** Waiting polls by pool, oldest first. */
  waiters: Map<string, Waiter[]>;
  jobs: Map<string, PendingJob>;
  idleListeners: Set<() => void>;
  tag: string;
  /** An agent whose poll's connection closed and that did not poll again within the grace. */
  onGone(session: AgentSession): void;
}

/**
 * How long a session whose poll's connection closed waits for the agent to poll again before it
 * ends: a poll cut by a proxy is renewed at once, a killed agent never comes back.
 */
export const AGENT_GONE_GRACE_MS = 2_000;

const JOB_TAG_LENGTH = 8;

const now = (): number => Date.now();

function unqueue(state: HubState, w: Waiter): void {
  const q = state.waiters.get(w.session.agentPoolId);
  const i = q?.indexOf(w) ?? -1;
  if (i >= 0) q!.splice(i, 1);
  w.session.waiting.delete(w);
}

/** Ends a session here: its polls answer `why`, its jobs are lost (their rows go back at once). */
function endSession(state: HubState, agentId: string, why: "revoked" | "ended"): void {
  const session = state.sessions.get(agentId);
  if (!session) return;
  state.sessions.delete(agentId);
  for (const w of [...session.waiting]) unqueue(state, w), w.settle({ job: null, reason: why });
  for (const id of [...session.jobs]) state.jobs.get(id)?.settle(lostBy(session));
}

/**
 * Waits up to `waitMs` for a job for `session`; the idle listeners are told a poll waits. A poll
 * whose client went away (`signal`) leaves the queue at once, so no job waits on a dead connection
 * and the agent dispatcher counts only live polls.
 */
function pollOn(state: HubState, session: AgentSession, waitMs: number, signal?: AbortSignal): Promise<PollEnd> {
  return new Promise<PollEnd>((resolve) => {
    const leave = (): void => void (!waiter.held && (unqueue(state, waiter), waiter.settle({ job: null, reason: "timeout" })));
    const cut = (): void => (leave(), goneUnlessBack(state, session));
    const timer = setTimeout(leave, waitMs);
    const settle = (e: PollEnd): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", cut);
      session.lastSeen = now();
      resolve(e);
    };
    const waiter: Waiter = { session, gone: () => signal?.aborted === true, settle };
    if (signal?.aborted) return resolve({ job: null, reason: "timeout" });
    signal?.addEventListener("abort", cut, { once: true });
    session.waiting.add(waiter);
    let q = state.waiters.get(session.agentPoolId);
    if (!q) state.waiters.set(session.agentPoolId, (q = []));
    q.push(waiter);
    for (const listener of state.idleListeners) listener();
  });
}

/**
 * A poll's client went away (a killed agent, a cut network): unless the agent polls again or holds
 * a job within the grace, its session ends here and its record reads `unknown` at once, instead of
 * `idle` until the silence sweep a minute later (found from outside).
 */
function goneUnlessBack(state: HubState, session: AgentSession): void {
  const cutAt = session.lastSeen;
  const timer = setTimeout(() => {
    const back = session.waiting.size > 0 || session.jobs.size > 0 || session.lastSeen > cutAt;
    if (back || state.sessions.get(session.agentId) !== session) return;
    state.sessions.delete(session.agentId);
    state.onGone(session);
  }, AGENT_GONE_GRACE_MS);
  timer.unref();
}

/** The job `request` becomes, for the agent that takes it. */
function toJob(id: string, request: JobRequest): AgentJob {
  const body = typeof request.body === "string" ? Buffer.from(request.body, "utf8") : Buffer.from(request.body);
  return {
    id,
    url: request.url,
    headers: request.headers,
    body: body.toString("base64"),
    "timeout-ms": request.timeoutMs,
    "lease-deadline": new Date(now() + request.timeoutMs + request.marginMs).toISOString(),
  };
}

/** The oldest live waiting poll of `pool`, out of the queue; undefined when none. */
function takeWaiter(state: HubState, pool: string): Waiter | undefined {
  const q = state.waiters.get(pool) ?? [];
  let waiter = q.shift();
  while (waiter && waiter.gone()) waiter.session.waiting.delete(waiter), (waiter = q.shift());
  waiter?.session.waiting.delete(waiter);
  return waiter;
}

/**
 * decision D58: runs `request.handing` for the agent of `taken` before the job is handed out. The
 * poll is held meanwhile (its wait running out does not end it). A rejection ends the poll without
 * a job and rethrows; a poll gone or a session ended meanwhile is a lost job (its record exists).
 */
async function beforeHanding(state: HubState, taken: Waiter, request: JobRequest): Promise<JobOutcome | null> {
  if (!request.handing) return null;
  const { session } = taken;
  taken.held = true;
  try {
    await request.handing(agentOf(session));
  } catch (err) {
    taken.settle({ job: null, reason: "timeout" });
    throw err;
  }
  if (!taken.gone() && state.sessions.get(session.agentId) === session) return null;
  taken.settle({ job: null, reason: "ended" });
  return lostBy(session);
}

/** Hands `request` to the oldest waiting poll of `pool` and resolves its report, or why there is none. */
async function dispatchTo(state: HubState, newId: (prefix: string) => string, pool: string, request: JobRequest): Promise<JobOutcome> {
  const taken = takeWaiter(state, pool);
  if (!taken) return { ok: false, reason: "no-agent" };
  const lost = await beforeHanding(state, taken, request);
  if (lost) return lost;
  const { session } = taken;
  const job = toJob(`job-${state.tag}${newId("job").slice(4)}`, request);
  return new Promise<JobOutcome>((resolve) => {
    const timer = setTimeout(() => settle(lostBy(session)), request.timeoutMs + request.marginMs);
    const settle = (outcome: JobOutcome): void => {
      if (!state.jobs.delete(job.id)) return;
      clearTimeout(timer);
      session.jobs.delete(job.id);
      resolve(outcome);
    };
    state.jobs.set(job.id, { session, settle });
    session.jobs.add(job.id);
    taken.settle({ job });
  });
}

export function createAgentHub(options: AgentHubOptions) {
  // This host's mark in the ids of the jobs it hands out (`job-<tag><random>`), so another host
  // behind the same load balancer can tell a report is not its own (421) instead of refusing it.
  const tag = options.newId("h").slice(2, 2 + JOB_TAG_LENGTH);
  const state: HubState = { sessions: new Map(), waiters: new Map(), jobs: new Map(), idleListeners: new Set(), tag, onGone: (s) => options.onSilent?.(s) };
  const { sessions, jobs } = state;
  const revoked = new Set<string>();
  const end = (agentId: string, why: "revoked" | "ended"): void => endSession(state, agentId, why);

  // Silent sessions are forgotten here and reported, so their agents read `unknown`.
  const sweeper = setInterval(() => {
    const cutoff = now() - AGENT_SILENT_MS;
    for (const s of [...sessions.values()]) {
      if (s.lastSeen < cutoff && s.waiting.size === 0 && s.jobs.size === 0) sessions.delete(s.agentId), options.onSilent?.(s);
    }
  }, AGENT_SILENT_MS / 4);
  sweeper.unref();

  return {
    /** The session of `agentId` (made on first use), seen now. */
    open(agentId: string, agentPoolId: string, tokenId: string, name?: string | null): AgentSession {
      let s = sessions.get(agentId);
      if (!s) sessions.set(agentId, (s = { agentId, agentPoolId, tokenId, lastSeen: now(), waiting: new Set(), jobs: new Set() }));
      if (name !== undefined) s.name = name;
      s.lastSeen = now();
      return s;
    },
    get: (agentId: string): AgentSession | undefined => sessions.get(agentId),
    /** Waits up to `waitMs` for a job for `session`; the agent dispatcher is told a poll waits. */
    poll: (session: AgentSession, waitMs: number, signal?: AbortSignal): Promise<PollEnd> => pollOn(state, session, waitMs, signal),
    /** Hands `request` to one waiting poll of `agentPoolId` and resolves its report, or why there is none. */
    dispatch: (agentPoolId: string, request: JobRequest): Promise<JobOutcome> => dispatchTo(state, options.newId, agentPoolId, request),

    /** An agent's report of job `jobId`: false (nothing changes) when the job is not its own or is over. */
    /** Whether `jobId` was handed out by another host (its tag is not this hub's). */
    isOtherHosts(jobId: string): boolean {
      return /^job-[A-Za-z0-9]{24}$/.test(jobId) && jobId.slice(4, 4 + JOB_TAG_LENGTH) !== tag;
    },
    report(agentId: string, jobId: string, result: JobResult): boolean {
      const job = jobs.get(jobId);
      if (!job || job.session.agentId !== agentId) return false;
      job.session.lastSeen = now();
      job.settle({ ok: true, agentId, result });
      return true;
    },

    end,
    /** Whether agent token `tokenId` was revoked while this host ran. */
    isRevoked: (tokenId: string): boolean => revoked.has(tokenId),
    /** Ends every session of agent token `tokenId` here (it was revoked); resolves how many. */
    revokeToken(tokenId: string): number {
      revoked.add(tokenId);
      const ended = [...sessions.values()].filter((s) => s.tokenId === tokenId);
      for (const s of ended) end(s.agentId, "revoked");
      return ended.length;
    },
    /** Polls waiting now, by pool. */
    idle(): Map<string, number> {
      const counts = new Map<string, number>();
      for (const [pool, q] of state.waiters) if (q.length > 0) counts.set(pool, q.length);
      return counts;
    },
    /** decision D34: an agent of `agentPoolId` waits here, holds a job, or polled here within 30 s. */
    connected(agentPoolId: string): boolean {
      const cutoff = now() - CONNECTED_MS;
      for (const s of sessions.values()) {
        if (s.agentPoolId === agentPoolId && (s.waiting.size > 0 || s.jobs.size > 0 || s.lastSeen >= cutoff)) return true;
      }
      return false;
    },
    /** Calls `listener` whenever a poll starts waiting; resolves the unsubscribe. */
    onIdle(listener: () => void): () => void {
      state.idleListeners.add(listener);
      return () => void state.idleListeners.delete(listener);
    },
    /** Ends every session (the host stops): polls answer `ended`, jobs are lost. */
    close(): void {
      clearInterval(sweeper);
      for (const id of [...sessions.keys()]) end(id, "ended");
    },
  };
}
export type AgentHub = ReturnType<typeof createAgentHub>;
