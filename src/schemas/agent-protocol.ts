import * as z from "zod";
import { AGENT_NAME_MAX } from "./agents.js";

/**
 * The agent protocol's bodies (decision D34): runplane's own, under `/api/agent/v1/`, spoken by
 * `runplane agent` and `runAgent()`. Plain JSON with kebab-case members, as the API's attributes.
 */

/** Longest a poll may wait for a job before it is answered 204, in ms. */
export const MAX_POLL_WAIT_MS = 25_000;
/** Most of an answer's body an agent reports (the excerpt cap, D15: 64 KiB), in UTF-16 units. */
export const MAX_REPORTED_BODY = 64 * 1024;
/**
 * Largest request body the protocol reads: a result's body above as JSON, where a control character
 * takes six bytes (`\u0001`), so up to six times its length, plus the answer's headers (at most
 * the 16 KiB an HTTP client reads, six times that as JSON at worst) and overhead. Smaller, and an
 * answer of control characters could never be reported: the job would go round until its deadline.
 */
export const MAX_PROTOCOL_BODY_BYTES = 8 * MAX_REPORTED_BODY;

/** Why an agent got no answer: the egress error codes (decision D15), as its own egress raised them. */
export const AGENT_ERROR_CODES = ["refused-url", "refused-address", "dns-failure", "timeout", "network", "aborted"] as const;

const agentId = z.string().regex(/^agent-[A-Za-z0-9]{1,64}$/, "must be an agent id");

export const RegisterSchema = z.strictObject({
  name: z.string().trim().min(1).max(AGENT_NAME_MAX).nullable().optional(),
  version: z.string().max(64).optional(),
});

export const PollSchema = z.strictObject({
  "agent-id": agentId,
  /** How long to wait for a job, at most {@link MAX_POLL_WAIT_MS}. */
  "wait-ms": z.number().int().min(0).max(MAX_POLL_WAIT_MS).optional(),
});

export const DeregisterSchema = z.strictObject({ "agent-id": agentId });

const header = z.string().max(8 * 1024);

/** What an agent reports of one job: the answer it got, or why it got none. */
export const JobResultSchema = z.strictObject({
  "agent-id": agentId,
  "duration-ms": z.number().min(0).max(3_600_000),
  /** Then wait for the agent's next job, as `jobs/next` does (one request per job instead of two). */
  "next-wait-ms": z.number().int().min(0).max(MAX_POLL_WAIT_MS).optional(),
  response: z
    .strictObject({
      status: z.number().int().min(100).max(599),
      headers: z.record(z.string().max(256), header).refine((h) => Object.keys(h).length <= 100, "at most 100 headers"),
      body: z.string().max(MAX_REPORTED_BODY),
      "body-truncated": z.boolean(),
      "body-withheld": z.boolean().optional(),
    })
    .optional(),
  error: z
    .strictObject({
      code: z.enum(AGENT_ERROR_CODES),
      // A fixed refusal reason or a bare error code (ECONNREFUSED): never a host, URL or message.
      reason: z.string().regex(/^[A-Za-z0-9_ -]{1,60}$/).optional(),
    })
    .optional(),
}).refine((r) => (r.response === undefined) !== (r.error === undefined), "exactly one of response and error");
export type JobResult = z.infer<typeof JobResultSchema>;

/** A job as the host hands it to an agent: the built, signed request, sent as is. */
export interface AgentJob {
  id: string;
  url: string;
  headers: Record<string, string>;
  /** The body's bytes, base64. */
  body: string;
  "timeout-ms": number;
  /** When the host stops waiting for this job's result (ISO 8601); a later report is refused. */
  "lease-deadline": string;
}
