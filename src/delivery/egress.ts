/**
 * The one module that makes outbound HTTP requests (decision D15): run task requests, their
 * retries and verification requests all go through an HttpTransport made here.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Agent, buildConnector, type Dispatcher } from "undici";
import { createDeadlineTimer } from "./deadline-timer.js";
import { createEgressPolicy, type EgressPolicy } from "./address-policy.js";

export { classifyAddress, createEgressPolicy } from "./address-policy.js";
export type { AddressClass, EgressPolicy, EgressPolicyOptions, RefusalReason } from "./address-policy.js";

export interface HttpRequest {
  url: string;
  method?: "POST";
  headers: Record<string, string>;
  body: Uint8Array | string;
  /**
   * Abandons the attempt (an `aborted` EgressError), e.g. when a dispatcher stops. A dispatcher
   * gives all its attempts one signal: a transport that listens on it removes its listener when
   * the request ends.
   */
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** UTF-8 decoded, at most `maxBodyBytes` bytes of the body. */
  body: string;
  bodyTruncated: boolean;
}

/** What delivery code depends on; hosts and tests may inject their own. Errors are EgressErrors. */
export interface HttpTransport {
  send(req: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
}

export type ResolvedAddress = { address: string; family: number };
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;
/** undici's socket factory. The guarded connector hands it only addresses that passed the policy. */
export type EgressConnector = buildConnector.connector;

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
}

export const EGRESS_ERROR_CODES = ["refused-url", "refused-address", "dns-failure", "timeout", "network", "aborted"] as const;
export type EgressErrorCode = (typeof EGRESS_ERROR_CODES)[number];

/** Messages carry only a code and a fixed reason: never the URL, headers or body, which may hold secrets. */
export class EgressError extends Error {
  readonly code: EgressErrorCode;
  readonly reason: string | undefined;
  constructor(code: EgressErrorCode, message: string, reason?: string) {
    super(message);
    this.name = "EgressError";
    this.code = code;
    this.reason = reason;
  }
}

export const isEgressError = (value: unknown): value is EgressError =>
  value instanceof EgressError || (value instanceof Error && value.name === "EgressError");

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
const DEFAULT_USER_AGENT = "runplane";
// undici computes these itself or refuses them; letting a caller set Host would also make the
// request name differ from the name the policy checked.
const RESERVED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "user-agent"]);

const systemResolve: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * An SSRF-guarded HTTP transport (D15): only http(s) without userinfo, and every address a socket
 * connects to (after DNS) must be public unicast or allowlisted. One attempt has a 10 s budget,
 * redirects are returned, never followed, and at most 64 KiB of a body is read.
 */
export function createEgress(options: EgressOptions = {}): HttpTransport {
  const policy = createEgressPolicy({ allow: options.allow ?? [] });
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
      return await attempt.done;
    } catch (err) {
      throw toEgressError(err);
    } finally {
      cancel();
      req.signal?.removeEventListener("abort", onAbort);
    }
  };

  return { send, close: () => agent.close() };
}

interface GuardOptions {
  policy: EgressPolicy;
  resolve: Resolver;
  inner: EgressConnector;
  timeoutMs: number;
}

/**
 * Runs for every new connection: resolves the name once, refuses the whole name if any address
 * is refused, and dials the first address, so the socket can only reach an address that was
 * checked; DNS rebinding between check and connect has nowhere to go.
 */
function guardConnector({ policy, resolve, inner, timeoutMs }: GuardOptions): EgressConnector {
  const pickAddress = async (hostname: string, port: number): Promise<string> => {
    const records = isIP(hostname) !== 0 ? [{ address: hostname, family: isIP(hostname) }] : await resolveWithin(resolve, hostname, timeoutMs);
    if (records.length === 0) throw new EgressError("dns-failure", "name resolution returned no address");
    for (const { address } of records) {
      const check = policy.checkAddress(address, hostname, port);
      if (!check.ok) throw refusal("refused-address", check.reason);
    }
    return records[0]!.address;
  };

  return (opts, callback) => {
    // undici passes "" for the scheme's default port; the allowlist judges the port really dialled.
    const port = opts.port !== "" && opts.port !== undefined ? Number(opts.port) : opts.protocol === "https:" ? 443 : 80;
    pickAddress(opts.hostname, port).then(
      (address) => {
        try {
          // `host` is left alone, so undici still derives SNI and the Host header from the name.
          inner({ ...opts, hostname: address, port: String(port) }, callback);
        } catch (err) {
          callback(err instanceof Error ? err : new Error("connect failed"), null);
        }
      },
      (err: unknown) => callback(toEgressError(err), null),
    );
  };
}

async function resolveWithin(resolve: Resolver, hostname: string, timeoutMs: number): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EgressError("dns-failure", "name resolution timed out")), timeoutMs);
  });
  try {
    return await Promise.race([resolve(hostname), deadline]);
  } catch (err) {
    if (isEgressError(err)) throw err;
    throw new EgressError("dns-failure", `name resolution failed${safeCode(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Ends an attempt whose body passed the cap: undici then drops the socket, so the rest is never read. */
class BodyCapped extends Error {}

/**
 * One exchange through undici's dispatch handler rather than `request()`: no response stream, no
 * AbortSignal (a signal per request cost about 20 us of CPU here, a quarter of a whole POST; issue
 * 14), the body kept up to `max` bytes as it arrives. `abort` ends it at once, whether or not undici
 * has started it yet. Redirects come back as they are: dispatch never follows them (D15).
 */
function dispatchCapped(agent: Agent, url: URL, method: string, headers: Record<string, string>, body: Uint8Array | string, max: number) {
  let controller: Dispatcher.DispatchController | null = null;
  let stopped: Error | null = null;
  let fail: (error: unknown) => void = () => undefined;
  const done = new Promise<HttpResponse>((resolve, reject) => {
    fail = reject;
    let status = 0;
    let responseHeaders: Record<string, string> = {};
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const finish = (): void => {
      resolve({ status, headers: responseHeaders, body: new TextDecoder().decode(Buffer.concat(chunks, size)), bodyTruncated: truncated });
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (stopped) c.abort(stopped);
      },
      onResponseStart(_c, statusCode, received) {
        // 1xx informational answers come first; only the final status and its headers count.
        if (statusCode < 200) return;
        status = statusCode;
        responseHeaders = flattenHeaders(received as Record<string, string | string[] | undefined>);
      },
      onResponseData(c, chunk) {
        if (truncated) return;
        const room = max - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size = max;
          truncated = true;
          c.abort(new BodyCapped());
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      },
      onResponseEnd: finish,
      onResponseError(_c, error) {
        if (truncated) finish();
        else reject(error);
      },
    };
    try {
      agent.dispatch({ origin: url.origin, path: `${url.pathname}${url.search}`, method, headers, body }, handler);
    } catch (error) {
      reject(error);
    }
  });
  return {
    done,
    abort(reason: Error): void {
      if (stopped) return;
      stopped = reason;
      controller?.abort(reason);
      fail(reason);
    },
  };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

const refusal = (code: "refused-url" | "refused-address", reason: string): EgressError =>
  new EgressError(code, code === "refused-url" ? `outbound URL refused (${reason})` : `destination address refused (${reason})`, reason);

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT"]);

function toEgressError(err: unknown): EgressError {
  if (isEgressError(err)) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && TIMEOUT_CODES.has(code)) return new EgressError("timeout", `request timed out${safeCode(err)}`);
  return new EgressError("network", `network error${safeCode(err)}`);
}

/** Only a bare error code such as ECONNREFUSED: underlying messages may quote hosts or URLs. */
function safeCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : "";
}
