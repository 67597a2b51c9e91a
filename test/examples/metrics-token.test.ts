import { metrics } from "@opentelemetry/api";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { readServerConfig } from "../../examples/server/config.js";
import { installMetrics, mountObservability } from "../../examples/server/observability.js";
import { createDispatcher } from "../../src/index.js";
import { createTestApp } from "../helpers/app.js";

// The reference server's /metrics answers without a token by default (on HOST, 127.0.0.1 unless
// set otherwise); METRICS_TOKEN makes it require `Authorization: Bearer <METRICS_TOKEN>`, as a
// Prometheus scrape job's `authorization` sends it.

let installed: Awaited<ReturnType<typeof installMetrics>> | undefined;
afterEach(async () => {
  metrics.disable();
  await installed?.shutdown();
});

const TOKEN = "metrics-token-0123456789";

async function routesWith(metricsToken: string | undefined) {
  installed = await installMetrics();
  const app = await createTestApp();
  const routes = new Hono();
  mountObservability(routes, installed.scrape, app.runplane, createDispatcher(app.runplane), { metricsToken });
  return routes;
}

describe("reference server: METRICS_TOKEN", () => {
  it("with METRICS_TOKEN, /metrics answers 401 without it or with another token, 200 with it", async () => {
    const routes = await routesWith(TOKEN);
    const none = await routes.request("/metrics");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(await none.text()).toBe("/metrics needs Authorization: Bearer <METRICS_TOKEN>\n");
    expect((await routes.request("/metrics", { headers: { authorization: "Bearer metrics-token-wrong-000000" } })).status).toBe(401);
    const res = await routes.request("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^# HELP /m);
    // Health stays open: load balancers probe it without credentials.
    expect((await routes.request("/healthz")).status).not.toBe(401);
  });

  it("without it, /metrics answers anyone who reaches the port", async () => {
    const routes = await routesWith(undefined);
    expect((await routes.request("/metrics")).status).toBe(200);
  });

  it("is read from METRICS_TOKEN (--metrics-token), at least 16 characters, never quoted", () => {
    expect(readServerConfig({ METRICS_TOKEN: TOKEN }).config.metricsToken).toBe(TOKEN);
    expect(readServerConfig({}).config.metricsToken).toBeUndefined();
    const { problems } = readServerConfig({ METRICS_TOKEN: "short-secret" });
    expect(problems).toStrictEqual([{ variable: "METRICS_TOKEN", message: "METRICS_TOKEN (--metrics-token) must be at least 16 characters; it has 12" }]);
  });
});
