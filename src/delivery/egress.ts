/**
 * The one module that makes outbound HTTP requests (decision D15): run task requests, their
 * retries and verification requests all go through an HttpTransport made here.
 */
import { networkInterfaces } from "node:os";
import { lookup } from "node:dns/promises";
import { Agent, buildConnector } from "undici";
import { createDeadlineTimer } from "./deadline-timer.js";
import { createEgressPolicy } from "./address-policy.js";
import { dispatchCapped } from "./capped-dispatch.js";
import { EgressError, refusal, toEgressError } from "./egress-error.js";
import { createReachLedger, guardConnector, originKey, type EgressConnector } from "./guarded-connector.js";
import { DEFAULT_MIN_PREFIX, WIDE_ADVICE, wideEntryProblem, type MinPrefix } from "./wide-entries.js";
import { togetherText, wideTogether } from "./wide-allowlist.js";
import type { HttpRequest, HttpResponse, HttpTransport, Resolver } from "./transport.js";

export { classifyAddress, createEgressPolicy } from "./address-policy.js";
export type { AddressClass, EgressPolicy, EgressPolicyOptions, RefusalReason } from "./address-policy.js";
export { EGRESS_ERROR_CODES, EgressError, isEgressError, type EgressErrorCode } from "./egress-error.js";
export type { EgressConnector } from "./guarded-connector.js";
export type { MinPrefix } from "./wide-entries.js";
export type { HttpRequest, HttpResponse, HttpTransport, ResolvedAddress, Resolver } from "./transport.js";

export interface EgressOptions {
  /** CIDRs, IP addresses and exact host names (optionally with :port) allowed besides public unicast; see EgressPolicyOptions. */
  allow?: readonly string[];
  /** Name resolution, called once per new connection. Default: the system resolver, all addresses. */
  resolve?: Resolver;
  /** Budget for one whole attempt: resolution, connect, headers and body. Default 10 s (D15). */
  timeoutMs?: number;
  /** Response bytes kept; the connection is dropped after that. Default 64 KiB (D15). */
  maxBodyBytes?: number;
  /**
   * Replaces any caller-supplied User-Agent (D1: a fixed product identifier). Without it the
   * caller's User-Agent is sent, or `runplane` when the caller gives none.
   */
  userAgent?: string;
  /** Below the guard: opens the socket to an already checked address. For custom TLS and tests. */
  connector?: EgressConnector;
  /**
   * decision D38: accept wide `allow` entries (a default route, a whole private range or more of one
   * than `minPrefix`, link-local, a metadata or unspecified address). Default false: they throw.
   */
  wide?: boolean;
  /**
   * With `wide`: link-local, metadata and unspecified addresses stay refused inside a wide entry
   * unless an entry names the exact address (the agent's egress: whole private ranges, no metadata).
   */
  keepNeverRefused?: boolean;
  /** decision D38: the widest network an entry inside a private range may cover. Default `{ ipv4: 16, ipv6: 48 }`. */
  minPrefix?: Partial<MinPrefix>;
  /**
   * decision D38: what is kept of an answer from a destination that is not public and that only
   * `allow` admitted: `"status"` (default) keeps no body, `"full"` keeps it like any other.
   */
  excerpts?: "status" | "full";
}

/** decision D38: throws a TypeError naming the first wide entry, unless the operator accepts them. */
function refuseWideEntries(options: EgressOptions): void {
  if (options.wide === true) return;
  const minPrefix = { ...DEFAULT_MIN_PREFIX, ...options.minPrefix };
  for (const entry of options.allow ?? []) {
    const problem = wideEntryProblem(entry, minPrefix);
    if (problem) {
      throw new TypeError(`egress.allow: ${JSON.stringify(entry)} is wide: it ${problem}; ${WIDE_ADVICE} (a /${minPrefix.ipv4} of an IPv4 private range, a /${minPrefix.ipv6} of fc00::/7), or pass wide: true to accept wide entries knowingly`);
    }
  }
  // decision D43: and together.
  const [together] = wideTogether(options.allow ?? [], minPrefix);
  if (together) throw new TypeError(`egress.allow: ${togetherText(together)}: wide together; ${WIDE_ADVICE}, or pass wide: true to accept wide entries knowingly`);
}


const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
const DEFAULT_USER_AGENT = "runplane";
// undici computes these itself or refuses them; letting a caller set Host would also make the
// request name differ from the name the policy checked.
const RESERVED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "user-agent"]);

/** How long the host's own interface addresses are kept before they are read again. */
const OWN_ADDRESSES_TTL_MS = 60_000;
let ownAddresses: { at: number; set: ReadonlySet<string> } | undefined;

/**
 * decision D38: every address of this host's network interfaces (canonical spelling), read at most
 * once a minute: requests to the host's own public address are refused like private ones.
 */
export function ownInterfaceAddresses(): ReadonlySet<string> {
  const now = Date.now();
  if (ownAddresses === undefined || now - ownAddresses.at >= OWN_ADDRESSES_TTL_MS) {
    const set = new Set<string>();
    for (const list of Object.values(networkInterfaces())) {
      for (const info of list ?? []) set.add(info.address.replace(/%.*$/, ""));
    }
    ownAddresses = { at: now, set };
  }
  return ownAddresses.set;
}

const systemResolve: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * An SSRF-guarded HTTP transport (D15): only http(s) without userinfo, and every address a socket
 * connects to (after DNS) must be public unicast or allowlisted. One attempt has a 10 s budget,
 * redirects are returned, never followed, and at most 64 KiB of a body is read.
 */
export function createEgress(options: EgressOptions = {}): HttpTransport {
  refuseWideEntries(options);
  const policy = createEgressPolicy({
    allow: options.allow ?? [],
    wide: options.wide === true,
    ownAddresses: ownInterfaceAddresses,
    ...(options.keepNeverRefused ? { keepNeverRefused: true } : {}),
  });
  const reach = options.excerpts === "full" ? undefined : createReachLedger();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const userAgent = options.userAgent;
  const deadlines = createDeadlineTimer();
  // A delivery URL is checked on every attempt; the answer for a string never changes (the policy
  // is fixed), so the last few hundred answers are kept.
  const checkedUrls = new Map<string, ReturnType<typeof policy.checkUrl>>();
  const checkUrl = (url: string): ReturnType<typeof policy.checkUrl> => {
    let checked = checkedUrls.get(url);
    if (checked === undefined) {
      if (checkedUrls.size >= 512) checkedUrls.clear();
      checkedUrls.set(url, (checked = policy.checkUrl(url)));
    }
    return checked;
  };
  const agent = new Agent({
    connect: guardConnector({
      policy,
      resolve: options.resolve ?? systemResolve,
      inner: options.connector ?? buildConnector({ timeout: timeoutMs }),
      timeoutMs,
      ...(reach ? { reach } : {}),
    }),
    // Backstops only; the attempt timer below is what enforces the whole-attempt budget.
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  const headersOf = (req: HttpRequest): Record<string, string> => {
    const headers: Record<string, string> = {};
    let callerAgent: string | undefined;
    for (const [name, value] of Object.entries(req.headers)) {
      if (name.toLowerCase() === "user-agent") callerAgent = value;
      else if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name] = value;
    }
    headers["user-agent"] = userAgent ?? callerAgent ?? DEFAULT_USER_AGENT;
    return headers;
  };

  const send = async (req: HttpRequest): Promise<HttpResponse> => {
    // decision D34: a pool task's request leaves only through an agent of its pool.
    if (req.agentPoolId !== undefined) throw refusal("refused-url", "agent-pool");
    const checked = checkUrl(req.url);
    if (!checked.ok) throw refusal(checked.code, checked.reason);
    if (req.signal?.aborted) throw new EgressError("aborted", "request aborted");
    // The budget, set before anything starts, ends the attempt even before undici has a socket for
    // it (a slow resolver or connect), and before the resolver's own timer of the same length.
    const cancel = deadlines.add(timeoutMs, () => attempt.abort(new EgressError("timeout", `request timed out after ${timeoutMs} ms`)));
    const attempt = dispatchCapped(agent, checked.url, req.method ?? "POST", headersOf(req), req.body, maxBodyBytes);
    const onAbort = (): void => attempt.abort(new EgressError("aborted", "request aborted"));
    req.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await attempt.done;
      // decision D38: judged now, while the socket that carried the answer is still counted.
      if (res.body !== "" && reach?.throughAllowlist(originKey(checked.url.protocol, checked.hostname, checked.port))) {
        return { ...res, body: "", bodyTruncated: false, bodyWithheld: true };
      }
      return res;
    } catch (err) {
      throw toEgressError(err);
    } finally {
      cancel();
      req.signal?.removeEventListener("abort", onAbort);
    }
  };

  return { send, close: () => agent.close() };
}



