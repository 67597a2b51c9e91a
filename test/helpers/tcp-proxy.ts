import net, { type AddressInfo } from "node:net";

/**
 * A loopback TCP proxy in front of a server (PostgreSQL here), to take the server away from one
 * client without touching the server others share (decision D28 tests): `close()` stops listening
 * (new connections are refused) and drops every open connection, with a FIN or, with `reset`, an
 * RST; `open()` listens again on the same port. `blackhole()` is a partition instead: connections
 * stay open and new ones are accepted, but no byte passes either way and nothing is closed, as when
 * packets are dropped; `open()` ends it, dropping the connections the partition held.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connections open through the proxy now. */
  readonly connections: number;
  close(options?: { reset?: boolean }): Promise<void>;
  open(): Promise<void>;
  blackhole(): void;
  /**
   * Arms a cut: the next answer of the server that holds `pattern` (e.g. the `COMMIT` tag of a
   * CommandComplete) is not passed on, and its connection is dropped. Resolves once it happened.
   */
  cutAfter(pattern: string): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let server: net.Server | null = null;
  let port = 0;
  let silent = false;
  const held = new Set<net.Socket>();

  const accept = (client: net.Socket): void => {
    if (silent) {
      held.add(client.on("error", () => undefined).pause());
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) socket.on("error", drop).on("close", drop);
    client.pipe(upstream);
    // The server's answers pass unless a cut is armed and this chunk holds its pattern: then the
    // connection ends with the answer unsent (the write is done on the server, the client never hears).
    upstream.on("data", (chunk: Buffer) => {
      if (cut && chunk.includes(cut.pattern)) {
        cut.done();
        cut = null;
        drop();
      } else client.write(chunk);
    });
  };
  let cut: { pattern: Buffer; done: () => void } | null = null;

  const dropHeld = (): void => {
    for (const socket of held) socket.destroy();
    held.clear();
  };

  const open = async (): Promise<void> => {
    if (silent) {
      silent = false;
      dropHeld();
      for (const pair of [...pairs]) for (const socket of pair) socket.destroy();
    }
    if (server) return;
    const next = net.createServer(accept);
    await new Promise<void>((resolve, reject) => next.once("error", reject).listen(port, "127.0.0.1", () => resolve()));
    port = (next.address() as AddressInfo).port;
    server = next;
  };

  await open();
  return {
    get port() {
      return port;
    },
    get connections() {
      return pairs.size;
    },
    cutAfter(pattern) {
      return new Promise<void>((done) => (cut = { pattern: Buffer.from(pattern), done }));
    },
    blackhole() {
      silent = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream).pause();
        upstream.unpipe(client).pause();
        held.add(client).add(upstream);
      }
    },
    async close(options = {}) {
      silent = false;
      dropHeld();
      const closing = server;
      server = null;
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        for (const socket of pair) {
          // An RST needs a connected socket; one still connecting is just destroyed.
          if (options.reset && !socket.connecting) socket.resetAndDestroy();
          else socket.destroy();
        }
      }
      if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    open,
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(proxy.port);
  return u.toString();
}
