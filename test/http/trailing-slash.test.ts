import { describe, expect, it } from "vitest";
import { createRouter } from "../../src/http/router.js";
import type { HttpMethod, Route } from "../../src/http/types.js";
import { createTestApp } from "../helpers/app.js";

/** A trailing slash is the same route, everywhere in the API, decided once by the router. */
describe("a trailing slash", () => {
  it("reaches the same route as the path without it, on every route the handler serves", async () => {
    const { runplane } = await createTestApp();
    const routes: Route[] = runplane.routes.map((r) => ({ method: r.method as HttpMethod, path: r.path.slice("/api/v2".length), auth: "none", handle: async () => ({ status: 204 }) }));
    const router = createRouter(routes);
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, "x-$1");
      const plain = router.match(route.method, path);
      const slashed = router.match(route.method, `${path}/`);
      expect(plain.kind === "found" && plain.route, path).toBe(route);
      expect(slashed.kind === "found" && slashed.route, `${path}/`).toBe(route);
      expect(slashed.kind === "found" && slashed.params).toStrictEqual(plain.kind === "found" && plain.params);
    }
  });

  it("answers as without it through the handler: a read, a write and an unknown path", async () => {
    const a = await createTestApp();
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars/")).json).toStrictEqual((await a.call("GET", "/api/v2/workspaces/ws-a/vars")).json);
    const created = await a.call("POST", "/api/v2/workspaces/ws-a/vars/", { body: { data: { type: "vars", attributes: { key: "k", category: "env" } } } });
    expect(created.status).toBe(201);
    expect((await a.call("GET", "/api/v2/nowhere/")).status).toBe(404);
  });
});
