import * as z from "zod";

/**
 * decision D31: each delivery attempt of a run task request is kept, so people see what the
 * integration answered, when and how fast, without reading logs.
 */

/**
 * At most 20 attempts per result (a result's request is retried at most ~17 times in the default
 * 10 minute window) and 1 KiB of the integration's answer per attempt; the rest is pruned by age.
 */
export const ATTEMPT_LIMITS = { perResult: 20, excerptBytes: 1024 } as const;

/**
 * `answered`: an HTTP status came back (200 or not); `failed`: no answer (connection error, timeout,
 * no report from the agent); `skipped`: nothing was sent; `under-way` (decision D58): handed to an
 * agent whose report has not come yet (its report, or the lease running out, completes the record).
 */
export const ATTEMPT_OUTCOMES = ["answered", "failed", "skipped", "under-way"] as const;
export type AttemptOutcomeKind = (typeof ATTEMPT_OUTCOMES)[number];

/**
 * One attempt as stored; the storage keeps a result's newest ones only. Immutable once ended; one
 * `under-way` is completed in its place, once (decision D58).
 */
export interface DeliveryAttemptRecord {
  /** `tda-<16 base62>` (D9). */
  id: string;
  taskResultId: string;
  deliveryId: string;
  /** The delivery's attempt number, from 1; one more per attempt. */
  number: number;
  startedAt: string;
  durationMs: number;
  outcome: AttemptOutcomeKind;
  /** The HTTP status of an `answered` attempt, else null. */
  status: number | null;
  /** A `failed` attempt's error code (`ECONNREFUSED`, `timeout`, `dns-failure`, ...), else null. */
  errorCode: string | null;
  /** Why it counts as it does, in words: `responded with 404`, `the connection failed (ECONNREFUSED)`, `the run task was deleted`. */
  detail: string;
  /** Up to 1 KiB of the answer's text, control characters removed and secrets redacted; null when there was none or it was not text. */
  excerpt: string | null;
  /** The answer was longer than the excerpt. */
  excerptTruncated: boolean;
  /** decision D34: the agent that sent the request, for a run task bound to an agent pool; null when the platform sent it. Absent reads as null. */
  agentId?: string | null;
  /** decision D58: that agent's `--name` when it took the request (null: none given); absent reads as null. */
  agentName?: string | null;
}

/** What the API shows of an attempt (`delivery-attempts`), camelCase as the writer takes it. */
export const DeliveryAttemptAttributes = z.object({
  attempt: z.number().int().min(1).describe("the delivery's attempt number, from 1"),
  startedAt: z.iso.datetime({ offset: true }).describe("RFC 3339 timestamp"),
  durationMs: z.number().int().min(0),
  outcome: z
    .enum(ATTEMPT_OUTCOMES)
    .describe("answered: an HTTP status came back; failed: no answer; skipped: nothing was sent; under-way: handed to an agent, no report yet (D58)"),
  status: z.number().int().nullable().describe("the HTTP status of an answered attempt"),
  errorCode: z.string().nullable().describe("the connection error code of a failed attempt (ECONNREFUSED, timeout, ...)"),
  detail: z.string().describe("why the attempt counts as it does, in words"),
  responseExcerpt: z
    .string()
    .nullable()
    .describe("at most 1 KiB of the answer's text, control characters removed, the request's access token, HMAC key and signature redacted (D31); null unless the caller manages the workspace's run tasks (D63)"),
  responseExcerptTruncated: z.boolean(),
  agentId: z.string().nullable().describe("the agent (`agents`) that sent the request of a run task bound to an agent pool; null when the platform sent it (D34)"),
  agentName: z.string().nullable().describe("that agent's name (its `--name`) when it took the request; null when it gave none or the platform sent it (D58)"),
});
