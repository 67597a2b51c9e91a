import { describe, expect, it } from "vitest";
import { listen, SOCKET_LIMITS } from "../../examples/server/integration.js";

// The reference server's sockets: slow or idle clients cannot hold them for Node's
// default minutes.

describe("reference server sockets", () => {
  it("bounds header time, request time, keep-alive idling and header count", async () => {
    const bound = await listen(() => new Response("ok"), 0, "127.0.0.1");
    try {
      expect(bound.server.headersTimeout).toBe(SOCKET_LIMITS.headersTimeout);
      expect(bound.server.requestTimeout).toBe(SOCKET_LIMITS.requestTimeout);
      expect(bound.server.keepAliveTimeout).toBe(SOCKET_LIMITS.keepAliveTimeout);
      expect(bound.server.maxHeadersCount).toBe(SOCKET_LIMITS.maxHeadersCount);
      expect(SOCKET_LIMITS.headersTimeout).toBeLessThanOrEqual(10_000);
      expect(SOCKET_LIMITS.requestTimeout).toBeLessThanOrEqual(60_000);
      expect(await (await fetch(`http://127.0.0.1:${bound.port}/`)).text()).toBe("ok");
    } finally {
      await bound.close();
    }
  });
});
