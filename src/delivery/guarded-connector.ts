import { isIP } from "node:net";
import type { buildConnector } from "undici";
import type { EgressPolicy } from "./address-policy.js";
import { EgressError, isEgressError, refusal, safeCode, toEgressError } from "./egress-error.js";
import type { ResolvedAddress, Resolver } from "./transport.js";

/** undici's socket factory. The guarded connector hands it only addresses that passed the policy. */
export type EgressConnector = buildConnector.connector;

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
export function guardConnector({ policy, resolve, inner, timeoutMs }: GuardOptions): EgressConnector {
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
