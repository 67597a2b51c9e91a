import { isIP } from "node:net";

/**
 * What the mount knows of the connection a request came on: a Web `Request` carries no socket.
 * `toNodeListener` passes it; a Hono or other mount passes `{ remoteAddress }` as the handler's
 * second argument (docs/reference/options.md, `trustProxy`).
 */
export interface Connection {
  remoteAddress?: string | null;
}

/** Most forwarding entries read from a header: a longer chain is no proxy setup anyone runs. */
const MAX_HOPS = 32;

const ip = (candidate: string | null | undefined): string | null => {
  const trimmed = candidate?.trim() ?? "";
  return trimmed.length <= 64 && isIP(trimmed) !== 0 ? trimmed : null;
};

/**
 * decision D62: the client's address. With `trustProxy` 0 (the default) the connection's own
 * address: forwarding headers are the client's to write and are ignored. With N proxies in front,
 * the address the outermost of them received from: the N-th `X-Forwarded-For` entry from the right
 * (each proxy appends the address it was sent from), else `X-Real-IP`. Only an IP address, else null.
 */
export function clientAddress(request: Request, connection: Connection | undefined, trustProxy: number): string | null {
  if (trustProxy <= 0) return ip(connection?.remoteAddress);
  const forwarded = request.headers.get("x-forwarded-for");
  if (forwarded) {
    const hops = forwarded.split(",").slice(-MAX_HOPS);
    return ip(hops[Math.max(0, hops.length - trustProxy)]);
  }
  return ip(request.headers.get("x-real-ip")) ?? ip(connection?.remoteAddress);
}
