import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoArtifacts } from "../../examples/server/artifacts.js";
import { listen } from "../../examples/server/integration.js";
import { createDispatcher } from "../../src/index.js";
import { createCallbackClient, createRunTaskHandler, type RunTaskRequest } from "../../src/integration/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

/**
 * Decision D24 over real HTTP: runplane and an integration each on a loopback port; the dispatcher
 * sends the run task request, and the integration downloads the plan JSON and the configuration
 * version from the URLs in it, with the access token, before it calls back.
 */
interface Download {
  status: number;
  contentType: string | null;
  bytes: Buffer;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function download(url: string | null | undefined, token: string): Promise<Download | null> {
  if (!url) return null;
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, contentType: res.headers.get("content-type"), bytes: Buffer.from(await res.arrayBuffer()) };
}

describe("artifact downloads over HTTP (D24)", () => {
  it("lets an integration download the plan JSON and the configuration version with its access token", { timeout: 20_000 }, async () => {
    const seen: { request: RunTaskRequest; plan: Download | null; configuration: Download | null }[] = [];
    const callbacks = createCallbackClient();
    const integration = await listen(
      createRunTaskHandler({
        hmacKey: "k",
        onRequest: async (request) => {
          const plan = await download(request.plan_json_api_url, request.access_token);
          const configuration = await download(request.configuration_version_download_url, request.access_token);
          seen.push({ request, plan, configuration });
          await callbacks.send(request, { status: "passed", message: "downloaded" });
        },
      }),
      0,
      "127.0.0.1",
    );
    closers.push(integration.close);

    let app: TestApp | null = null;
    const api = await listen((request) => app!.runplane.handler(request), 0, "127.0.0.1");
    closers.push(api.close);
    app = await createTestApp({
      publicUrl: `http://127.0.0.1:${api.port}`,
      transport: undefined,
      egress: { allow: [`127.0.0.1:${integration.port}`] },
      artifacts: demoArtifacts,
    });
    closers.push(() => app!.runplane.close());

    const rt = app.runplane.runTasks;
    const task = await rt.tasks.create("acme", { name: "scanner", url: `http://127.0.0.1:${integration.port}/`, "hmac-key": "k" });
    await rt.workspaceTasks.create("ws-a", task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
    const { run } = await rt.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "destroy it" });
    const stage = await rt.startStage(run.id, "post_plan");
    const dispatcher = createDispatcher(app.runplane, { pollIntervalMs: 20 });
    dispatcher.start();
    closers.unshift(() => dispatcher.stop({ graceMs: 1_000 }));
    await vi.waitFor(async () => expect((await rt.getStageById(stage.id))!.status).toBe("passed"), { timeout: 10_000, interval: 50 });

    expect(seen).toHaveLength(1);
    const { request, plan, configuration } = seen[0]!;
    expect(request.configuration_version_download_url).toBe(`http://127.0.0.1:${api.port}/api/v2/configuration-versions/cv-1/download`);
    expect(plan).toMatchObject({ status: 200, contentType: "application/json" });
    const planJson = JSON.parse(plan!.bytes.toString("utf8"));
    expect(planJson.format_version).toBe("1.2");
    expect(planJson.resource_changes.map((c: any) => [c.address, c.change.actions])).toEqual([
      ["null_resource.demo", ["create"]],
      ["null_resource.legacy", ["delete"]],
    ]);
    expect(configuration).toMatchObject({ status: 200, contentType: "application/octet-stream" });
    expect(gunzipSync(configuration!.bytes).toString("latin1")).toContain('resource "null_resource" "demo"');

    // Once its result is final the token downloads nothing more.
    expect((await download(request.plan_json_api_url, request.access_token))!.status).toBe(401);
  });
});
