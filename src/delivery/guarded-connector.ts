import { isIP } from "node:net";
import type { buildConnector } from "undici";
import { classifyAddress, type EgressPolicy } from "./address-policy.js";
import { EgressError, isEgressError, refusal, safeCode, toEgressError } from "./egress-error.js";
import type { ResolvedAddress, Resolver } from "./transport.js";

/** undici's socket factory. The guarded connector hands it only addresses that passed the policy. */
export type EgressConnector = buildConnector.connector;

interface GuardOptions {
  policy: EgressPolicy;
  resolve: Resolver;
  inner: EgressConnector;
  timeoutMs: number;
  /** Told of every socket opened to an address that only the allowlist admits (decision D38). */
  reach?: ReachLedger;
}

/** `http://host:port` as both the connector and the request see it (IPv6 without brackets). */
export const originKey = (protocol: string, hostname: string, port: number): string =>
  `${protocol}//${hostname.replace(/^\[|\]$/g, "")}:${port}`;

/**
 * decision D38: which origins were reached at an address that is not public, admitted only by an
 * allowlist entry. The connector knows the address it dialled; an answer does not say which of the
 * origin's pooled sockets carried it, so an origin counts as reached through the allowlist while
 * such a socket of it is open and for REACH_MEMORY_MS after the last one closed: a server that
 * closes the socket right after its last byte must not get its body kept because the close was
 * handled before the answer was judged. Erring this way withholds more, never less.
 */
export interface ReachLedger {
  opened(key: string, socket: { once(event: "close", listener: () => void): unknown }): void;
  throughAllowlist(key: string): boolean;
}

const REACH_MEMORY_MS = 60_000;
/** Origins remembered at most; closed ones past their memory are dropped first. */
const REACH_MAX_ORIGINS = 10_000;

export function createReachLedger(now: () => number = Date.now): ReachLedger {
  const origins = new Map<string, { open: number; closedAt: number }>();
  const prune = (): void => {
    for (const [key, entry] of origins) if (entry.open === 0 && now() - entry.closedAt >= REACH_MEMORY_MS) origins.delete(key);
  };
  return {
    opened(key, socket) {
      if (!origins.has(key) && origins.size >= REACH_MAX_ORIGINS) prune();
      const entry = origins.get(key) ?? { open: 0, closedAt: 0 };
      entry.open++;
      origins.set(key, entry);
      socket.once("close", () => {
        entry.open--;
        entry.closedAt = now();
      });
    },
    throughAllowlist(key) {
      const entry = origins.get(key);
      return entry !== undefined && (entry.open > 0 || now() - entry.closedAt < REACH_MEMORY_MS);
    },
  };
}

/**
 * Runs for every new connection: resolves the name once, refuses the whole name if any address
 * is refused, and dials the first address, so the socket can only reach an address that was
 * checked; DNS rebinding between check and connect has nowhere to go.
 */
export function guardConnector({ policy, resolve, inner, timeoutMs, reach }: GuardOptions): EgressConnector {
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
          // The address passed the policy: if it is not public, only the allowlist admitted it.
          const private_ = reach !== undefined && classifyAddress(address) !== "public";
          inner({ ...opts, hostname: address, port: String(port) }, (...args) => {
            if (private_ && args[0] === null) reach.opened(originKey(opts.protocol, opts.hostname, port), args[1]);
            callback(...args);
          });
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
