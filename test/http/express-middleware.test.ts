import express from "express";
import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createExpressMiddleware } from "../../src/express.js";
import { createRunplane, silentLogger } from "../../src/index.js";
import { checkResponsesOf } from "../helpers/openapi-check.js";
import { baseUrlOf, closeServer } from "../../examples/test-support.js";

let server: Server | undefined;
afterEach(async () => {
  if (server) await closeServer(server);
  server = undefined;
});

async function listen(app: express.Express): Promise<string> {
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server!.once("listening", resolve));
  return baseUrlOf(server);
}

describe("runplane/express middleware", () => {
  it("serves paths below basePath and passes every other request to the routes registered after it", async () => {
    const runplane = checkResponsesOf(createRunplane({ storage: createMemoryStorage(), logger: silentLogger, basePath: "/tfe/api/v2/" }));
    const app = express();
    app.use(createExpressMiddleware(runplane));
    app.get("/healthz", (_req, res) => void res.send("host ok"));
    app.get("/tfe/api/v2x", (_req, res) => void res.send("not the API"));
    const base = await listen(app);

    expect((await fetch(`${base}/tfe/api/v2/ping`)).status).toBe(204);
    expect(await (await fetch(`${base}/healthz`)).text()).toBe("host ok");
    // A sibling path that merely starts with the same characters is not below basePath.
    expect(await (await fetch(`${base}/tfe/api/v2x`)).text()).toBe("not the API");
    // Below basePath the API owns the namespace: an unknown path is its JSON:API 404.
    const unknown = await fetch(`${base}/tfe/api/v2/nope?x=1`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toBe("application/vnd.api+json");
    // Outside basePath and unrouted: Express's own 404, not runplane's.
    const missing = await fetch(`${base}/elsewhere`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).not.toBe("application/vnd.api+json");
  });

  it("works under app.use(path, ...) since it reads the original URL", async () => {
    const runplane = checkResponsesOf(createRunplane({ storage: createMemoryStorage(), logger: silentLogger }));
    const app = express();
    app.use("/api", createExpressMiddleware(runplane));
    app.get("/api/other", (_req, res) => void res.send("host"));
    const base = await listen(app);
    expect((await fetch(`${base}/api/v2/ping`)).status).toBe(204);
    expect(await (await fetch(`${base}/api/other`)).text()).toBe("host");
  });

  it("hands a handler failure to Express's error middleware", async () => {
    const failing = { basePath: "/api/v2", handler: () => Promise.reject(new Error("boom")) };
    const app = express();
    app.use(createExpressMiddleware(failing));
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(503).send(`handled ${error.message}`));
    const base = await listen(app);
    const res = await fetch(`${base}/api/v2/ping`);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe("handled boom");
  });
});
