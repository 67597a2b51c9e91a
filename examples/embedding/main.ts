// One whole embedding (docs/guides/embedding.md): `npx tsx examples/embedding/main.ts` from a clone.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createDispatcher, createRunplane, generateKey } from "runplane";
import { createMemoryStorage } from "runplane/adapters/memory";
import { createCallbackClient, createRunTaskHandler } from "runplane/integration";
import { toNodeListener } from "runplane/node";

/** Binds a server on the loopback address (port 0: any free port) and returns its origin. */
async function listen(server: http.Server, port = 0): Promise<string> {
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// 1. A run task integration to deliver to. Yours runs elsewhere; runplane needs its URL and HMAC key.
const hmacKey = generateKey();
const callbacks = createCallbackClient();
const onRequest = createRunTaskHandler({
  hmacKey,
  async onRequest(request) {
    console.log(`delivered: ${request.stage} request for ${request.run_id}`);
    await callbacks.send(request, { status: "passed", message: "No findings" });
  },
});
const integration = http.createServer(toNodeListener(onRequest));
const integrationUrl = await listen(integration);

// 2. runplane, on a server bound first so that publicUrl (where integrations call back) is known.
const server = http.createServer();
const publicUrl = await listen(server, Number(process.env.PORT ?? 0));
const runplane = createRunplane({
  storage: createMemoryStorage(), // or createSqliteStorage(db), await createPostgresStorage(pool)
  // Seals HMAC keys and sensitive values (D11): keep it, e.g. from `npx runplane keygen`.
  keyring: { keys: [{ id: "k1", key: process.env.RUNPLANE_KEY ?? generateKey() }] },
  publicUrl,
  // The SSRF guard (D15) reaches public addresses only: admit the integration's loopback port.
  egress: { allow: [new URL(integrationUrl).host] },
});
server.on("request", toNodeListener(runplane.handler));

// 3. The dispatcher sends what startStage enqueues; without one no run task request goes out.
const dispatcher = createDispatcher(runplane);
dispatcher.start();

// 4. A first organization, its owners team and an API token: the default authenticator knows
//    only tokens issued here. A team named "owners" acts as owners (D21).
const { directory } = runplane;
await directory.organizations.create({ name: "acme", email: "ops@acme.example" });
await directory.teams.create({ id: "team-owners", name: "owners", organization: "acme" });
const { token } = await directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners" });
await directory.projects.create({ id: "prj-main", name: "main", organization: "acme" });
await directory.workspaces.create({ id: "ws-main", name: "network", organization: "acme", projectId: "prj-main" });

// 5. What an API client does with that token: create a run task (runplane sends it the
//    verification request) and attach it to the workspace.
async function post(path: string, data: unknown): Promise<{ id: string }> {
  const response = await fetch(`${publicUrl}${runplane.basePath}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" },
    body: JSON.stringify({ data }),
  });
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { data: { id: string } }).data;
}
const task = await post("/organizations/acme/tasks", {
  type: "tasks",
  attributes: { name: "scanner", url: integrationUrl, "hmac-key": hmacKey },
});
await post("/workspaces/ws-main/tasks", {
  type: "workspace-tasks",
  attributes: { "enforcement-level": "mandatory", stages: ["post_plan"] },
  relationships: { task: { data: { type: "tasks", id: task.id } } },
});

// 6. The host's part of a run: create it, start its post_plan stage, wait for the stage's verdict.
const { run } = await runplane.runTasks.createRun({ workspaceId: "ws-main", configurationVersionId: "cv-1", message: "hello" });
const verdict = new Promise<string>((resolve) => {
  const off = runplane.runTasks.on("stage-status", (event) => {
    if (event.runId !== run.id || event.to === "pending" || event.to === "running") return;
    off();
    resolve(event.to);
  });
});
await runplane.runTasks.startStage(run.id, "post_plan");
console.log(`stage post_plan: ${await verdict}`);
// The run ended (a host would apply it, or stop at a failed stage): no stage it never started stays pending (D47).
await runplane.runTasks.endRun(run.id);

// 7. Stop: attempts in flight finish, then the servers and the storage close.
await dispatcher.stop();
await runplane.close();
for (const s of [server, integration]) {
  s.close();
  s.closeAllConnections();
}
