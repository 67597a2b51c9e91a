import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { clientAddress } from "../../src/http/client-address.js";
import { toNodeListener } from "../../src/node.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

// Decision D62, found from outside: the audit trail's client address and an agent's ip-address
// were read from X-Forwarded-For, which any client may write, with no proxy in front: a forged
// header put any address in the trail. Now the connection's own address, unless the operator says
// how many proxies are in front (`trustProxy`).

const withHeaders = (headers: Record<string, string>) => new Request("http://localhost/", { headers });

describe("the client's address (trustProxy)", () => {
  it("is the connection's own without trusted proxies, whatever the forwarding headers say", () => {
    const forged = withHeaders({ "x-forwarded-for": "6.6.6.6", "x-real-ip": "7.7.7.7" });
    expect(clientAddress(forged, { remoteAddress: "192.0.2.10" }, 0)).toBe("192.0.2.10");
    expect(clientAddress(forged, undefined, 0)).toBeNull();
    expect(clientAddress(withHeaders({}), { remoteAddress: "not an address" }, 0)).toBeNull();
  });

  it("is the N-th X-Forwarded-For entry from the right with N proxies in front, else X-Real-IP", () => {
    const chain = withHeaders({ "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.2" });
    expect(clientAddress(chain, { remoteAddress: "10.0.0.1" }, 1)).toBe("10.0.0.2");
    expect(clientAddress(chain, { remoteAddress: "10.0.0.1" }, 2)).toBe("198.51.100.7");
    // Fewer entries than proxies: the left-most, the farthest any proxy saw.
    expect(clientAddress(chain, { remoteAddress: "10.0.0.1" }, 5)).toBe("6.6.6.6");
    expect(clientAddress(withHeaders({ "x-real-ip": "198.51.100.8" }), { remoteAddress: "10.0.0.1" }, 1)).toBe("198.51.100.8");
    expect(clientAddress(withHeaders({}), { remoteAddress: "10.0.0.1" }, 1)).toBe("10.0.0.1");
    expect(clientAddress(withHeaders({ "x-forwarded-for": "10.0.0.1, ' OR 1=1 --" }), undefined, 1)).toBeNull();
  });
});

describe("the client's address through toNodeListener", () => {
  let app: TestApp | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await app?.runplane.close();
    app = server = undefined;
  });

  async function recordedAddress(trustProxy?: number): Promise<string | null> {
    app = await createTestApp(trustProxy === undefined ? {} : { trustProxy });
    server = createServer(toNodeListener(app.runplane.handler));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/workspaces/ws-a/vars`, {
      method: "POST",
      headers: { authorization: `Bearer ${app.ownerToken}`, "content-type": "application/vnd.api+json", "x-forwarded-for": "6.6.6.6" },
      body: JSON.stringify({ data: { type: "vars", attributes: { key: "k", value: "v", category: "env" } } }),
    });
    expect(res.status).toBe(201);
    const events = (await app.storage.audit!.list("acme", { offset: 0, limit: 10 })).items;
    return events.find((e) => e.resource.type === "var")!.request.clientAddress;
  }

  it("records the socket's address and ignores a forged X-Forwarded-For by default", async () => {
    expect(await recordedAddress()).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });

  it("records the forwarded address when the operator says one proxy is in front", async () => {
    expect(await recordedAddress(1)).toBe("6.6.6.6");
  });
});
