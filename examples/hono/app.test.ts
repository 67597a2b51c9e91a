import { serve } from "@hono/node-server";
import type { Server } from "node:http";
import { afterEach, beforeEach, describe } from "vitest";
import { closeServer, createSeededRunplane, mountSuite, type MountedApp } from "../test-support.js";
import { createHonoApp } from "./app.js";

describe("runplane mounted on Hono over real HTTP", () => {
  let server: Server | undefined;
  let mounted: MountedApp;

  beforeEach(async () => {
    const { runplane, ownerToken } = await createSeededRunplane();
    const app = createHonoApp(runplane);
    const port = await new Promise<number>((resolve) => {
      // serve() on plain HTTP options returns a node:http Server.
      server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(info.port)) as Server;
    });
    mounted = { baseUrl: `http://127.0.0.1:${port}`, ownerToken };
  });

  afterEach(async () => {
    if (server) await closeServer(server);
    server = undefined;
  });

  mountSuite(() => mounted, { bodyErrorsFromRunplane: true });
});
