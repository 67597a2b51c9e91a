import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { listen } from "../../examples/server/integration.js";

// CONNECT never reaches a Web handler (Node hands it to a `connect` listener, and without one
// closes the socket): the reference server answers it 405 like any other method a route lacks.

/** Sends `head` on a raw socket and resolves with everything read until the server closes it (2 s at most). */
function exchange(port: number, head: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(head));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
    socket.on("error", () => undefined);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, 2_000);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
  });
}

describe("the reference server and CONNECT", () => {
  it("answers CONNECT on any target with a JSON:API 405 and closes the connection", async () => {
    const bound = await listen(() => new Response("ok"), 0, "127.0.0.1");
    try {
      for (const target of ["/api/v2/ping", "/app/runs/run-1", "example.com:443", "127.0.0.1:5432"]) {
        const { text, closed } = await exchange(bound.port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
        expect(text, target).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
        expect(text.toLowerCase()).toContain("content-type: application/vnd.api+json\r\n");
        expect(text.toLowerCase()).toContain("connection: close\r\n");
        const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { errors: { status: string; title: string }[] };
        expect(body.errors[0]).toMatchObject({ status: "405", title: "method not allowed" });
        expect(closed).toBe(true);
      }
      // The server still answers everything else.
      expect(await (await fetch(`http://127.0.0.1:${bound.port}/`)).text()).toBe("ok");
    } finally {
      await bound.close();
    }
  });
});
