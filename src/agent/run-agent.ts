import { hostname } from "node:os";
import { MAX_POLL_WAIT_MS, type AgentJob } from "../schemas/agent-protocol.js";
import { AgentRefusedError, createAgentClient, type AgentClient } from "./client.js";
import { createJobRunner, type JobEgressOptions } from "./job.js";

/** Options of {@link runAgent}. */
export interface AgentOptions extends JobEgressOptions {
  /** The runplane origin the agent connects to, e.g. `https://runplane.example.com`. */
  url: string;
  /** An agent token of the pool (`runplane token`, or the agent token API). */
  token: string;
  /** What the agent calls itself in the Agents API. Default: the host name. */
  name?: string;
  /** Jobs at once (each a waiting poll). Default 1. */
  concurrency?: number;
  /**
   * How long one poll waits for a job, in ms. Default, and at most: the `poll-wait-ms` the server
   * names at registration (25 s). Decision D44: every poll sends its wait, so the server never
   * holds a poll longer than the client waits for it.
   */
  pollWaitMs?: number;
  /** How long a call may go without an answer beyond the wait it asked for, in ms (default 15 s). */
  requestTimeoutMs?: number;
  /** One line per state change (never the token, a body or a signature). Default: stderr. */
  log?: (line: string) => void;
  /** Backoff after a failed request: from `minMs` (default 500) doubling up to `maxMs` (default 30 s), with jitter. */
  backoff?: { minMs?: number; maxMs?: number };
  fetch?: typeof fetch;
}

/** A running agent. */
export interface AgentHandle {
  /** The agent's id once registered. */
  readonly agentId: Promise<string>;
  /** Resolves when the agent stopped: `stopped` after `stop()`, `refused` when runplane refused its token. */
  readonly done: Promise<"stopped" | "refused">;
  /** Finishes the jobs in hand, reports them, deregisters (status `exited`) and resolves. */
  stop(): Promise<void>;
}

const PACKAGE_VERSION = "agent-protocol-v1";

/** Waits `ms`, or less when `signal` fires. */
const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/** Doubling delays with full jitter, reset by any answer (decision D44). */
function createBackoff(options: AgentOptions["backoff"] = {}) {
  const min = options.minMs ?? 500;
  const max = options.maxMs ?? 30_000;
  let next = min;
  return {
    delay(): number {
      const ms = Math.min(max, next);
      next = Math.min(max, next * 2);
      return ms / 2 + Math.random() * (ms / 2);
    },
    reset: (): void => void (next = min),
  };
}

type Answer = { status: number; json: unknown };

/**
 * Reports one job's outcome, asking (unless stopping) for the next job in the same request; resolves
 * that answer, or null when there is none to use (refused as late, or given up at the job's lease
 * deadline: the host has given the job back by then).
 */
export async function report(client: AgentClient, agentId: string, job: AgentJob, body: object, next: object, stopping: AbortSignal, log: (line: string) => void): Promise<Answer | null> {
  const deadline = Date.parse(job["lease-deadline"]);
  // After a try that got no answer, the host may have taken that report: a 409 then most likely
  // means "already reported", not "too late".
  let mayHaveLanded = false;
  for (let tries = 0; Date.now() < deadline; tries++) {
    // A stopping agent still reports, but asks for nothing more, and nothing cuts that report off.
    const asking = !stopping.aborted;
    try {
      const answer = await client.call(`jobs/${encodeURIComponent(job.id)}/result`, { "agent-id": agentId, ...body, ...(asking ? next : {}) }, asking ? stopping : undefined);
      // Another host behind the same load balancer got it (the connection is closed): again, soon.
      if (answer.status === 421) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** tries, 1_000)));
        continue;
      }
      if (answer.status === 409 && !mayHaveLanded) log(`job ${job.id}: the host no longer holds it (its lease ran out); the report was not taken`);
      return answer.status === 200 || answer.status === 204 ? answer : null;
    } catch (err) {
      if (err instanceof AgentRefusedError) throw err;
      mayHaveLanded = true;
      // Stopped while the report waited for the next job: sent again without asking (409 if taken).
      if (asking && stopping.aborted) continue;
      await pause(Math.min(1_000 * 2 ** tries, Math.max(0, deadline - Date.now())), stopping);
    }
  }
  return null;
}

/** What registration tells the agent: its id, and how long the server holds a poll. */
interface Registration {
  id: string;
  pollWaitMs: number;
}

/**
 * decision D44: the wait every poll asks for: the embedder's `pollWaitMs`, never longer than the
 * server's `poll-wait-ms` (an older server naming none: the protocol's maximum).
 */
function pollWaitOf(json: Record<string, unknown>, asked: number | undefined): number {
  const offered = json["poll-wait-ms"];
  const server = typeof offered === "number" && Number.isSafeInteger(offered) && offered >= 0 ? Math.min(offered, MAX_POLL_WAIT_MS) : MAX_POLL_WAIT_MS;
  return Math.min(server, asked ?? server);
}

/** Registers, retrying with backoff until it works, the token is refused (it throws), or the agent stops (null). */
async function registerAgent(client: AgentClient, options: AgentOptions, stopping: AbortSignal, log: (line: string) => void): Promise<Registration | null> {
  const backoff = createBackoff(options.backoff);
  while (!stopping.aborted) {
    try {
      const { json } = await client.call("register", { name: options.name ?? hostname(), version: PACKAGE_VERSION });
      const answer = (json ?? {}) as Record<string, unknown>;
      const id = answer["agent-id"];
      if (typeof id !== "string") throw new Error("no agent id");
      log(`registered as ${id} in pool ${String(answer["agent-pool-id"])}`);
      return { id, pollWaitMs: pollWaitOf(answer, options.pollWaitMs) };
    } catch (err) {
      if (err instanceof AgentRefusedError) throw err;
      const ms = backoff.delay();
      log(`could not register (${err instanceof Error ? err.message : "error"}); retrying in ${Math.round(ms)} ms`);
      await pause(ms, stopping);
    }
  }
  return null;
}

/**
 * Runs an agent (decision D34): registers with runplane using an agent token of its pool,
 * long-polls for the requests of its pool's run tasks (`concurrency` polls at once), sends each
 * through its own guarded egress (private and loopback addresses allowed by default, link-local
 * and metadata addresses not), and reports each answer. Outbound only. Errors back off with
 * jitter; a refused token stops it.
 */
export function runAgent(options: AgentOptions): AgentHandle {
  const client = createAgentClient(options);
  const runner = createJobRunner(options);
  const log = options.log ?? ((line: string) => void process.stderr.write(`runplane agent: ${line}\n`));
  const concurrency = options.concurrency ?? 1;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError("runAgent: concurrency must be a positive integer");
  const stopping = new AbortController();
  let registered!: (id: string) => void;
  const agentId = new Promise<string>((resolve) => (registered = resolve));
  let refused = false;

  /** One poll lane: wait for a job, send it, report it; until stopped. */
  async function lane({ id, pollWaitMs }: Registration): Promise<void> {
    const backoff = createBackoff(options.backoff);
    let connected = true;
    // decision D44: the wait is always sent; the client's timeout is that wait plus its margin.
    const wait = { "wait-ms": pollWaitMs };
    const next = { "next-wait-ms": pollWaitMs };
    // The answer to a report that also asked for the next job stands in for the next poll.
    let pending: Answer | null = null;
    // A job handed out with the last report is sent even when the agent is stopping meanwhile.
    while (!stopping.signal.aborted || pending?.status === 200) {
      try {
        const { status, json } = pending ?? (await client.call("jobs/next", { "agent-id": id, ...wait }, stopping.signal));
        pending = null;
        // Any answer is a connection back (a 204 is a poll that ended without a job, not an error).
        if (!connected) (connected = true), log("connected again");
        backoff.reset();
        if (status !== 200 || !json) continue;
        const job = json as AgentJob;
        const began = performance.now();
        const outcome = await runner.run(job);
        pending = await report(client, id, job, { "duration-ms": Math.round(performance.now() - began), ...outcome }, next, stopping.signal, log);
      } catch (err) {
        if (err instanceof AgentRefusedError) throw err;
        if (stopping.signal.aborted) return;
        const ms = backoff.delay();
        if (connected) (connected = false), log(`lost the connection (${err instanceof Error ? err.message : "error"}); retrying with backoff`);
        await pause(ms, stopping.signal);
      }
    }
  }

  const done = (async (): Promise<"stopped" | "refused"> => {
    try {
      const registration = await registerAgent(client, options, stopping.signal, log);
      if (registration === null) return "stopped";
      const { id } = registration;
      registered(id);
      await Promise.all(Array.from({ length: concurrency }, () => lane(registration)));
      // A clean stop: the host marks the agent exited and gives back anything it still holds.
      await client.call("deregister", { "agent-id": id }).catch(() => undefined);
      log("stopped");
      return "stopped";
    } catch (err) {
      if (!(err instanceof AgentRefusedError)) throw err;
      refused = true;
      stopping.abort();
      log(`${err.message}: stopping`);
      return "refused";
    } finally {
      await runner.close();
    }
  })();

  return {
    agentId,
    done,
    async stop() {
      if (!refused) stopping.abort();
      await done;
    },
  };
}
