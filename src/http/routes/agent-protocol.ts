/**
 * decision D34: the agent protocol, runplane's own (not HCP Terraform's agent protocol), under
 * `/api/agent/v1/`. Agents connect outbound only, with an agent token of their pool as
 * `Authorization: Bearer`: register, long-poll for jobs (the poll is their ping), report each job,
 * deregister. Every request verifies the token again, and a waiting poll re-checks it every few
 * seconds, so a revoked token ends its sessions on every host.
 */
import { asAuditActor, inAuditRequest } from "../../services/audit-request.js";
import type { Connection } from "../client-address.js";
import type { AuditActor } from "../../schemas/audit.js";
import { ApiError, conflict, toApiError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { DeregisterSchema, JobResultSchema, MAX_POLL_WAIT_MS, MAX_PROTOCOL_BODY_BYTES, PollSchema, RegisterSchema } from "../../schemas/agent-protocol.js";
import type { VerifiedAgentToken } from "../../schemas/agent-tokens.js";
import type { AgentStatus } from "../../schemas/agents.js";
import type { AgentHub, AgentSession, PollEnd } from "../../services/agent-hub.js";
import type { AgentService } from "../../services/agents.js";
import type { AgentTokenService } from "../../services/agent-tokens.js";
import { parseOrThrow } from "../../services/validate.js";
import { readJsonBody } from "../body.js";
import { json } from "../handler-answers.js";
import { errorDocument } from "../jsonapi.js";
import type { RateLimit } from "../rate-limit.js";
import type { Route } from "../types.js";

/** What the rate limiter is told of a protocol request: authenticated by its token, as an API route. */
const RATE_LIMITED_AS: Route = { method: "POST", path: "/agent", auth: "principal", handle: async () => ({ status: 204 }) };

/** Where the protocol is served, whatever the API's base path. */
export const AGENT_PROTOCOL_PREFIX = "/api/agent/v1/";
/** How often an agent's last-ping-at is written while its status stays the same, in ms. */
export const PING_EVERY_MS = 15_000;
/** How often a waiting poll checks that its token still holds, in ms. */
export const TOKEN_RECHECK_MS = 2_000;

export interface AgentProtocolDeps {
  hub: AgentHub;
  agents: AgentService;
  agentTokens: AgentTokenService;
  logger: Logger;
  rateLimit?: RateLimit;
  /** decision D62: the client's address of a request, as option `trustProxy` says to read it. */
  clientAddress(request: Request, connection?: Connection): string | null;
  /** How long a token re-check waits between two (tests shorten it). */
  recheckMs?: number;
}

const unauthorized = (): ApiError => new ApiError("unauthorized");
const plain = (status: number, body?: unknown): Response =>
  body === undefined ? new Response(null, { status }) : new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** How long a verified token is trusted without a storage read (a revocation here ends it at once). */
const VERIFIED_FOR_MS = 1_000;

/** Who is asking: the bearer token, and the session of the agent a body names (the token's own). */
function createAgentAuth({ hub, agents, agentTokens }: AgentProtocolDeps) {
  // An agent sends a request or two per job: verifying its token in storage each time was half the
  // host's cost of a delivery through an agent. Another host's revocation still lands within a second.
  const recent = new Map<string, { v: VerifiedAgentToken; at: number }>();
  async function verified(request: Request): Promise<{ token: string; verified: VerifiedAgentToken }> {
    const header = request.headers.get("authorization") ?? "";
    const token = /^Bearer (\S{1,512})$/i.exec(header)?.[1];
    if (!token) throw unauthorized();
    const held = recent.get(token);
    if (held && Date.now() - held.at < VERIFIED_FOR_MS && !hub.isRevoked(held.v.tokenId)) return { token, verified: held.v };
    const v = await agentTokens.verify(token);
    if (!v || hub.isRevoked(v.tokenId)) throw unauthorized();
    if (recent.size >= 1_000) recent.clear();
    recent.set(token, { v, at: Date.now() });
    return { token, verified: v };
  }

  /** The session of the agent the body names, which must be this token's (a 401 otherwise). */
  async function sessionOf(agentId: string, v: VerifiedAgentToken): Promise<AgentSession> {
    const held = hub.get(agentId);
    if (held) {
      if (held.tokenId !== v.tokenId) throw unauthorized();
      return hub.open(agentId, held.agentPoolId, held.tokenId);
    }
    // Polled another host before (or this host restarted): the record says whose agent it is.
    const record = await agents.get(agentId).catch(() => null);
    if (!record || record.tokenId !== v.tokenId || record.status === "exited") throw unauthorized();
    return hub.open(agentId, record.agentPoolId, record.tokenId, record.name);
  }
  return { verified, sessionOf };
}

/** The four calls of the protocol, each after its token was verified. */
function createAgentEndpoints(deps: AgentProtocolDeps) {
  const { hub, agents, agentTokens, logger } = deps;
  const recheckMs = deps.recheckMs ?? TOKEN_RECHECK_MS;
  const { sessionOf } = createAgentAuth(deps);

  /**
   * The agent's status and last-ping-at: written when the status changed (at most once a second)
   * or 15 s after the last write, not on every poll and job (a write each was a storage write per
   * request). So a status may lag a second behind; `unknown` comes after 60 s of silence.
   */
  async function ping(session: AgentSession, status: AgentStatus): Promise<void> {
    const now = Date.now();
    const last = session.written;
    if (last && now - last.at < (last.status === status ? PING_EVERY_MS : 1_000)) return;
    session.written = { status, at: now };
    await agents.report(session.agentId, status);
  }

  /** decision D62: `address` is the client's as option `trustProxy` reads it, `unknown` when not an IP address. */
  async function register(request: Request, v: VerifiedAgentToken, address: string | null): Promise<Response> {
    const body = parseOrThrow(RegisterSchema, (await readJsonBody(request, MAX_PROTOCOL_BODY_BYTES)) ?? {}, "");
    const agent = await agents.register(v.agentPoolId, { tokenId: v.tokenId, name: body.name ?? null, ipAddress: address ?? "unknown", status: "idle" });
    hub.open(agent.id, agent.agentPoolId, v.tokenId, agent.name);
    logger.info("agent registered", { agentId: agent.id, agentPoolId: agent.agentPoolId });
    return plain(201, { "agent-id": agent.id, "agent-pool-id": agent.agentPoolId, "poll-wait-ms": MAX_POLL_WAIT_MS });
  }

  /** Waits for a job; every `recheckMs` the token is verified again (revoked elsewhere: 401 within that). */
  async function waitForJob(request: Request, token: string, v: VerifiedAgentToken, session: AgentSession, waitMs: number): Promise<Response> {
    await ping(session, session.jobs.size > 0 ? "busy" : "idle");
    const recheck = setInterval(() => {
      void agentTokens.verify(token).then(
        (still) => void (still ? undefined : hub.revokeToken(v.tokenId)),
        () => undefined,
      );
    }, recheckMs);
    let end: PollEnd;
    try {
      end = await hub.poll(session, waitMs, request.signal);
    } finally {
      clearInterval(recheck);
    }
    if (end.job) {
      await ping(session, "busy").catch(() => undefined);
      return plain(200, end.job);
    }
    if (end.reason === "revoked") throw unauthorized();
    return plain(204);
  }

  async function poll(request: Request, token: string, v: VerifiedAgentToken): Promise<Response> {
    const body = parseOrThrow(PollSchema, await readJsonBody(request, MAX_PROTOCOL_BODY_BYTES), "");
    return waitForJob(request, token, v, await sessionOf(body["agent-id"], v), body["wait-ms"] ?? MAX_POLL_WAIT_MS);
  }

  /** A job's report; with `next-wait-ms` the same request then waits for the agent's next job, as a poll does. */
  async function result(request: Request, token: string, v: VerifiedAgentToken, jobId: string): Promise<Response> {
    const body = parseOrThrow(JobResultSchema, await readJsonBody(request, MAX_PROTOCOL_BODY_BYTES, true), "");
    const session = await sessionOf(body["agent-id"], v);
    // Behind a load balancer the report may reach another host than the one holding the job: 421,
    // and the connection closed, so the agent's next try may reach the right one.
    if (hub.isOtherHosts(jobId)) throw new ApiError("misdirected", { detail: "the job was handed out by another host: send the report again" }, { connection: "close" });
    // A job this agent does not hold (any more: its lease ran out and the row went back) changes nothing.
    if (!hub.report(session.agentId, jobId, body)) throw conflict("the job is not held by this agent (its lease ran out, or it was never handed to it)");
    const next = body["next-wait-ms"];
    return next === undefined ? plain(204) : waitForJob(request, token, v, session, next);
  }

  async function deregister(request: Request, v: VerifiedAgentToken): Promise<Response> {
    const body = parseOrThrow(DeregisterSchema, await readJsonBody(request, MAX_PROTOCOL_BODY_BYTES), "");
    const session = await sessionOf(body["agent-id"], v);
    hub.end(session.agentId, "ended");
    await agents.report(session.agentId, "exited");
    logger.info("agent exited", { agentId: session.agentId });
    return plain(204);
  }

  return { register, poll, result, deregister };
}

export function createAgentProtocolHandler(deps: AgentProtocolDeps): (request: Request, connection?: Connection) => Promise<Response> {
  const { logger } = deps;
  const { verified } = createAgentAuth(deps);
  const { register, poll, result, deregister } = createAgentEndpoints(deps);

  async function route(request: Request, url: URL, address: string | null): Promise<Response> {
    const path = url.pathname.slice(AGENT_PROTOCOL_PREFIX.length);
    if (request.method !== "POST") throw new ApiError("method-not-allowed", { detail: "Allowed: POST" });
    const { token, verified: v } = await verified(request);
    // decision D53: registration and deregistration are recorded as the agent's token, from this request.
    const asAgent = (fn: () => Promise<Response>) => inAuditRequest(request, address, () => asAuditActor(agentActor(v), fn));
    if (path === "register") return asAgent(() => register(request, v, address));
    if (path === "jobs/next") return poll(request, token, v);
    if (path === "deregister") return asAgent(() => deregister(request, v));
    const job = /^jobs\/(job-[A-Za-z0-9]{1,64})\/result$/.exec(path)?.[1];
    if (job) return result(request, token, v, job);
    throw new ApiError("not-found");
  }

  return async (request, connection) => {
    const url = new URL(request.url);
    const address = deps.clientAddress(request, connection);
    let admission: ReturnType<RateLimit["admit"]> | undefined;
    let response: Response;
    try {
      // decision D33: counted as any token's requests are: an answer other than 401 proves the
      // token, which then has a bucket of its own (unproven ones share one).
      admission = deps.rateLimit?.admit(request, RATE_LIMITED_AS, {}, url);
      response = await route(request, url, address);
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status >= 500) logger.error("agent protocol request failed", { path: url.pathname, error: error instanceof Error ? error.name : typeof error });
      response = json(apiError.status, errorDocument(apiError), { ...apiError.headers });
    }
    admission?.answered(response.status);
    return response;
  };
}

/** decision D53: an agent acts as its pool's token (its id, never the token). */
const agentActor = (v: VerifiedAgentToken): AuditActor => ({ kind: "token", tokenId: v.tokenId, tokenKind: "agent", userId: null, teamId: null, description: `agent token of ${v.agentPoolId}` });
