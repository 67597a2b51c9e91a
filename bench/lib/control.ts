import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

/** Steps a bench server runs on request: `POST /bench/<step>` with a JSON object of numbers. */
export type ControlRoutes = Record<string, (sizes: Record<string, number>) => Promise<unknown>>;

/**
 * A bench server's HTTP side on an ephemeral loopback port: `/bench/<step>` runs a step and
 * answers its JSON result (500 and the error's message when it fails); everything else goes to the
 * runplane handler once `serve` was given one (503 before: the callback URLs in runplane's requests
 * need the port, so the server listens before runplane exists).
 */
export async function listenForBench(routes: ControlRoutes) {
  let api: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const http = createServer((req, res) => {
    if (req.url?.startsWith("/bench/")) return void control(routes, req, res);
    if (api) return api(req, res);
    res.writeHead(503).end();
  });
  http.keepAliveTimeout = 60_000;
  const origin = await new Promise<string>((resolve) =>
    http.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(http.address() as { port: number }).port}`)),
  );
  return {
    origin,
    serve(handler: (req: IncomingMessage, res: ServerResponse) => void): void {
      api = handler;
    },
    close(): void {
      http.close();
      http.closeAllConnections();
    },
  };
}

function control(routes: ControlRoutes, req: IncomingMessage, res: ServerResponse): void {
  let body = "";
  req.on("data", (chunk: Buffer) => (body += chunk.toString()));
  req.on("end", () => {
    const route = routes[req.url ?? ""];
    if (!route) return void res.writeHead(404).end();
    route(body ? (JSON.parse(body) as Record<string, number>) : {}).then(
      (result) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result)),
      (error: unknown) => res.writeHead(500).end(error instanceof Error ? error.message : String(error)),
    );
  });
}
