import type { Server } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, closeServer, createSeededRunplane, mountSuite, WORKSPACE_ID, type MountedApp } from "../test-support.js";
import { createExpressApp } from "./app.js";

const VARS = `/api/v2/workspaces/${WORKSPACE_ID}/vars`;

describe.each([
  { name: "without a body parser", parseJsonFirst: false },
  { name: "after express.json() consumed the body", parseJsonFirst: true },
])("runplane mounted on Express 5 $name", ({ parseJsonFirst }) => {
  let server: Server | undefined;
  let mounted: MountedApp;

  beforeEach(async () => {
    const { runplane, ownerToken } = await createSeededRunplane();
    const app = createExpressApp(runplane, { parseJsonFirst });
    const port = await new Promise<number>((resolve, reject) => {
      server = app.listen(0, "127.0.0.1", (error) => {
        if (error) reject(error);
        else resolve((server!.address() as { port: number }).port);
      });
    });
    mounted = { baseUrl: `http://127.0.0.1:${port}`, ownerToken };
  });

  afterEach(async () => {
    if (server) await closeServer(server);
    server = undefined;
  });

  // With express.json() first, malformed and oversized JSON bodies never reach runplane.
  mountSuite(() => mounted, { bodyErrorsFromRunplane: !parseJsonFirst });

  it.each(["application/vnd.api+json", "application/json", "application/vnd.api+json; charset=utf-8"])(
    "round-trips a %s body through POST and PATCH",
    async (contentType) => {
      const created = await call(mounted, "POST", VARS, {
        body: { data: { type: "vars", attributes: { key: "ünïcode", value: 'quote " and \\ and €', category: "env", hcl: false } } },
        contentType,
      });
      expect(created.status).toBe(201);
      expect(created.json.data.attributes).toMatchObject({ key: "ünïcode", value: 'quote " and \\ and €', category: "env" });
      const id = created.json.data.id as string;
      const patched = await call(mounted, "PATCH", `${VARS}/${id}`, {
        body: { data: { type: "vars", id, attributes: { value: "", description: "emptied" } } },
        contentType,
      });
      expect(patched.status).toBe(200);
      expect(patched.json.data.attributes).toMatchObject({ key: "ünïcode", value: "", description: "emptied" });
    },
  );

  it("answers an empty JSON object body with a JSON:API 422 on /data", async () => {
    const res = await call(mounted, "POST", VARS, { body: "{}" });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
    expect(res.json.errors[0].source.pointer).toBe("/data");
  });
});

describe("express.json() placed before the runplane mount", () => {
  it("answers malformed JSON itself, which proves it ran first", async () => {
    const { runplane, ownerToken } = await createSeededRunplane();
    const server = createExpressApp(runplane, { parseJsonFirst: true }).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const mounted = { baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`, ownerToken };
      const res = await call(mounted, "POST", VARS, { body: "{oops" });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).not.toContain("application/vnd.api+json");
    } finally {
      await closeServer(server);
    }
  });
});
