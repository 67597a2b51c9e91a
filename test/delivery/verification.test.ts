import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { RunTaskRequestSchema } from "../../src/schemas/run-tasks.js";
import { startLoopbackServer, type LoopbackServer, type Reply } from "../helpers/loopback-server.js";
import { answering200 } from "../helpers/app.js";
import { taskBody } from "../helpers/run-tasks.js";
import { bodyOf, deliveryApp, noRealDns, type DeliveryApp } from "./support.js";

// Decision D15 and reference 2.3: creating a run task, or changing its URL or HMAC key, sends a
// signed request with `access_token: "test-token"` through the guarded transport; the change is
// saved only when the endpoint answers exactly 200, else 422 with the reason.

let receiver: LoopbackServer;
let a: DeliveryApp;
beforeEach(async () => {
  receiver = await startLoopbackServer({ kind: "respond", status: 200 });
  a = await deliveryApp();
});
afterEach(async () => {
  await a.close();
  await receiver.close();
});

const create = (url: string, extra: Record<string, unknown> = {}) =>
  a.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "scanner", url, ...extra }) });

describe("verification request", () => {
  it("is sent on create, signed, with every documented field and the test token", async () => {
    const res = await create(receiver.url("/hook"), { "hmac-key": "k" });
    expect(res.status).toBe(201);
    expect(receiver.requests).toHaveLength(1);
    const body = bodyOf(receiver.requests[0]!);
    expect(RunTaskRequestSchema.safeParse(body).success).toBe(true);
    expect(body).toMatchObject({ access_token: "test-token", payload_version: 1, stage: "post_plan", organization_name: "acme" });
    expect(receiver.requests[0]!.headers["x-svc-task-signature"]).toMatch(/^[0-9a-f]{128}$/);
  });

  it.each<[string, Reply | "closed", string]>([
    ["a 500", { kind: "respond", status: 500 }, "The run task URL responded with 500 to the verification request; it must answer 200."],
    ["a 201", { kind: "respond", status: 201 }, "The run task URL responded with 201 to the verification request; it must answer 200."],
    ["a redirect", { kind: "respond", status: 302, headers: { location: "http://127.0.0.1:1/" } }, "The run task URL responded with 302 to the verification request; it must answer 200."],
    ["a reset", { kind: "reset" }, "The run task URL could not be reached: the connection failed (ECONNRESET)"],
    ["silence", { kind: "hang" }, "The run task URL could not be reached: the request timed out"],
    ["a closed port", "closed", "The run task URL could not be reached: the connection failed (ECONNREFUSED)"],
  ])("refuses a create answered with %s (422) and saves nothing", async (_name, reply, detail) => {
    if (reply === "closed") await receiver.close();
    else receiver.setScript(reply);
    const res = await create(receiver.url("/hook"));
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({ detail, source: { pointer: "/data/attributes/url" } });
    expect((await a.runplane.runTasks.tasks.list("acme")).total).toBe(0);
  });

  // A refusal of the signature is far more often a key that differs than a dialect that does:
  // `runplane/integration` reads both headers. The hint names both in that order and the command
  // that tells them apart, in either dialect.
  it.each([
    [
      "default",
      "x-svc-task-signature",
      'The run task URL responded with 401 to the verification request; it must answer 200. If it refused the signature, the likely causes, most likely first: ' +
        "1. the HMAC key differs from the one the integration checks; " +
        '2. the integration reads only the X-TFC-Task-Signature header (dialect "hcp-terraform", what integrations written for HCP Terraform expect), and this request was signed in X-SVC-Task-Signature (dialect "default"). ' +
        "`runplane check-integration <url> --hmac-key <key> --dialect default`, then with `--dialect hcp-terraform`, tells them apart: a differing key fails in both dialects, a dialect mismatch passes in one.",
    ],
    [
      "hcp-terraform",
      "x-tfc-task-signature",
      'The run task URL responded with 401 to the verification request; it must answer 200. If it refused the signature, the likely causes, most likely first: ' +
        "1. the HMAC key differs from the one the integration checks; " +
        '2. the integration reads only the X-SVC-Task-Signature header (dialect "default"), and this request was signed in X-TFC-Task-Signature (dialect "hcp-terraform"). ' +
        "`runplane check-integration <url> --hmac-key <key> --dialect default`, then with `--dialect hcp-terraform`, tells them apart: a differing key fails in both dialects, a dialect mismatch passes in one.",
    ],
  ] as const)("a 4xx in the %s dialect names the key first, then the other dialect's header, and the check that tells them apart", async (dialect, header, detail) => {
    const app = await deliveryApp({ dialect });
    try {
      receiver.setScript({ kind: "respond", status: 401 });
      const res = await app.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "scanner", url: receiver.url("/hook"), "hmac-key": "k" }) });
      expect(res.status).toBe(422);
      expect(receiver.requests[0]!.headers[header]).toMatch(/^[0-9a-f]{128}$/);
      expect(res.json.errors[0].detail).toBe(detail);
    } finally {
      await app.close();
    }
  });

  it("is sent again only when the URL or the key changes, and a refused change keeps the old values", async () => {
    const other = await startLoopbackServer({ kind: "respond", status: 200 });
    try {
      const id = (await create(receiver.url("/hook"), { "hmac-key": "k1" })).json.data.id as string;
      const patch = (attributes: Record<string, unknown>) => a.call("PATCH", `/api/v2/tasks/${id}`, { body: taskBody(attributes) });

      expect((await patch({ name: "renamed", description: "d", url: receiver.url("/hook"), "hmac-key": "k1" })).status).toBe(200);
      expect(receiver.requests).toHaveLength(1);

      expect((await patch({ url: other.url("/new") })).status).toBe(200);
      expect(other.requests).toHaveLength(1);
      expect((await a.runplane.runTasks.tasks.get(id)).url).toBe(other.url("/new"));

      other.setScript({ kind: "respond", status: 401 });
      const refused = await patch({ "hmac-key": "k2" });
      expect(refused.status).toBe(422);
      expect(refused.json.errors[0].source.pointer).toBe("/data/attributes/hmac-key");
      const changeUrl = await patch({ url: receiver.url("/gone"), name: "n2" });
      expect(changeUrl.status).toBe(200);
      receiver.setScript({ kind: "respond", status: 404 });
      expect((await patch({ url: receiver.url("/404") })).status).toBe(422);
      expect(await a.runplane.runTasks.tasks.get(id)).toMatchObject({ url: receiver.url("/gone"), name: "n2" });
    } finally {
      await other.close();
    }
  });

  it("renames a task whose key this keyring cannot open, but asks for the key with a new URL", async () => {
    const id = (await create(receiver.url("/hook"), { "hmac-key": "k1" })).json.data.id as string;
    const stranger = createRunplane({ storage: a.storage, logger: silentLogger, keyring: { keys: [{ id: "k9", key: generateKey() }] }, egress: { allow: ["127.0.0.1/32"] }, transport: answering200() });
    expect(await stranger.runTasks.tasks.update(id, { name: "renamed" })).toMatchObject({ name: "renamed" });
    await expect(stranger.runTasks.tasks.update(id, { url: receiver.url("/new") })).rejects.toMatchObject({
      status: 422,
      items: [{ pointer: "/data/attributes/hmac-key" }],
    });
    expect(await stranger.runTasks.tasks.update(id, { url: receiver.url("/new"), "hmac-key": "k2" })).toMatchObject({ url: receiver.url("/new") });
  });

  it("refuses through the programmatic API too", async () => {
    receiver.setScript({ kind: "respond", status: 503 });
    await expect(a.runplane.runTasks.tasks.create("acme", { name: "x", url: receiver.url("/") })).rejects.toMatchObject({ status: 422 });
  });

  it("is sent by default: a runplane without an injected transport verifies through its own egress", async () => {
    const runplane = createRunplane({ storage: createMemoryStorage(), logger: silentLogger, egress: { allow: ["127.0.0.1/32"], resolve: noRealDns } });
    try {
      await runplane.directory.organizations.create({ name: "acme" });
      await runplane.runTasks.tasks.create("acme", { name: "x", url: receiver.url("/hook") });
      expect(receiver.requests).toHaveLength(1);
      expect(bodyOf(receiver.requests[0]!).access_token).toBe("test-token");
      receiver.setScript({ kind: "respond", status: 500 });
      await expect(runplane.runTasks.tasks.create("acme", { name: "y", url: receiver.url("/hook") })).rejects.toMatchObject({ status: 422 });
    } finally {
      await runplane.close();
    }
  });
});
