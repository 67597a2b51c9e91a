/**
 * The agent bench's peer process (decision D34): the integration (node:http, answers 200 at once)
 * and, once told the host's origin and agent token on stdin, `runAgent` for the host's pool, so
 * neither costs the host's CPU. Prints `receiver <port>`, then `agent <id>`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { runAgent } from "../../src/agent/index.js";

const receiver = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
});
receiver.keepAliveTimeout = 60_000;
receiver.listen(0, "127.0.0.1", () => process.stdout.write(`receiver ${(receiver.address() as AddressInfo).port}\n`));

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const [origin, token, concurrency] = line.split(" ");
  const agent = runAgent({ url: origin!, token: token!, name: "bench-agent", allow: ["127.0.0.1/32"], concurrency: Number(concurrency), excerpts: "full", log: () => undefined });
  void agent.agentId.then((id) => process.stdout.write(`agent ${id}\n`));
  process.once("SIGTERM", () => void agent.stop().then(() => process.exit(0)));
});
