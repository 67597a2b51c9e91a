import { describe, expect, it, vi } from "vitest";
import { runAgent } from "../../src/agent/index.js";

// Found by an operator (issue 43): `runplane agent` with its default flags polled without `wait-ms`,
// so its client gave the call 15 s while the server held it for 25 s: every idle poll was aborted,
// logged as a lost connection, and the backoff then left the agent without a poll for seconds.
// decision D44: the agent polls with the server's `poll-wait-ms` and gives each call that plus a margin.

/** A fake runplane: registration names `pollWaitMs`; a poll without `wait-ms` is held for `serverDefaultMs`. */
function fakeServer(pollWaitMs: number, serverDefaultMs: number, failFirst = 0) {
  const polls: Array<{ waitMs: number | undefined; at: number }> = [];
  let failures = failFirst;
  const fetch: typeof globalThis.fetch = async (url, init) => {
    const path = new URL(String(url)).pathname;
    const body = JSON.parse(String(init?.body ?? "{}")) as Record<string, unknown>;
    if (path.endsWith("/register")) return Response.json({ "agent-id": "agent-1", "agent-pool-id": "apool-1", "poll-wait-ms": pollWaitMs }, { status: 201 });
    if (path.endsWith("/deregister")) return new Response(null, { status: 204 });
    polls.push({ waitMs: body["wait-ms"] as number | undefined, at: performance.now() });
    if (failures > 0) return failures--, new Response(null, { status: 503 });
    const hold = (body["wait-ms"] as number | undefined) ?? serverDefaultMs;
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(() => resolve(new Response(null, { status: 204 })), hold);
      init?.signal?.addEventListener("abort", () => (clearTimeout(timer), reject(new DOMException("aborted", "AbortError"))), { once: true });
    });
  };
  return { fetch, polls };
}

describe("an idle agent's polls", () => {
  it("wait as long as the server's poll-wait-ms, end without an error, and are asked again at once", async () => {
    const server = fakeServer(300, 1_000);
    const lines: string[] = [];
    const agent = runAgent({ url: "http://runplane.test", token: "t", fetch: server.fetch, requestTimeoutMs: 200, log: (l) => lines.push(l), backoff: { minMs: 400, maxMs: 400 } });
    await vi.waitFor(() => expect(server.polls.length).toBeGreaterThanOrEqual(4), { timeout: 5_000, interval: 20 });
    await agent.stop();
    expect(server.polls.every((p) => p.waitMs === 300)).toBe(true);
    // No backoff between two idle polls: the next starts as soon as the last ended.
    for (let i = 1; i < 4; i++) expect(server.polls[i]!.at - server.polls[i - 1]!.at).toBeLessThan(300 + 150);
    expect(lines.filter((l) => /lost the connection|connected again/.test(l))).toStrictEqual([]);
  });

  it("log 'connected again' on the first poll answered after failures, and then keep polling without backoff", async () => {
    const server = fakeServer(200, 200, 2);
    const lines: string[] = [];
    const agent = runAgent({ url: "http://runplane.test", token: "t", fetch: server.fetch, log: (l) => lines.push(l), backoff: { minMs: 50, maxMs: 50 } });
    await vi.waitFor(() => expect(server.polls.length).toBeGreaterThanOrEqual(5), { timeout: 5_000, interval: 20 });
    await agent.stop();
    expect(lines.filter((l) => /lost the connection|connected again/.test(l)).map((l) => l.split(" (")[0])).toStrictEqual(["lost the connection", "connected again"]);
    // After the 503s, polls follow each other without a pause.
    expect(server.polls[4]!.at - server.polls[3]!.at).toBeLessThan(200 + 100);
  });

  it("keep a shorter pollWaitMs the embedder asked for, and never wait longer than the server offers", async () => {
    const short = fakeServer(25_000, 25_000);
    const a = runAgent({ url: "http://runplane.test", token: "t", fetch: short.fetch, pollWaitMs: 100, log: () => undefined });
    await vi.waitFor(() => expect(short.polls.length).toBeGreaterThanOrEqual(2), { timeout: 5_000, interval: 20 });
    await a.stop();
    expect(short.polls[0]!.waitMs).toBe(100);
    const capped = fakeServer(150, 25_000);
    const b = runAgent({ url: "http://runplane.test", token: "t", fetch: capped.fetch, pollWaitMs: 20_000, log: () => undefined });
    await vi.waitFor(() => expect(capped.polls.length).toBeGreaterThanOrEqual(2), { timeout: 5_000, interval: 20 });
    await b.stop();
    expect(capped.polls[0]!.waitMs).toBe(150);
  });
});
