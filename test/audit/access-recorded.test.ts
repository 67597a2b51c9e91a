import { afterEach, describe, expect, it } from "vitest";
import { STORAGES } from "../helpers/storages.js";
import { attachTask, callbackBody, createTask, runTaskApp, sendCallback, startedRun, taskBody, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";
import { eventsOf, expectNoSecret, theEvent, tokenIdOf } from "./helpers.js";

const grantBody = (access: string) => ({
  data: {
    type: "team-projects",
    attributes: { access },
    relationships: { team: { data: { type: "teams", id: "team-devs" } }, project: { data: { type: "projects", id: "prj-a" } } },
  },
});
const HMAC = "hmac-secret-key-0123456789";
const HMAC2 = "hmac-secret-key-9876543210";

// decision D53: one test per recorded action; each fails when the event is missing or holds a secret.
describe.each(STORAGES)("audit: access, tokens, run tasks and overrides ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Parameters<typeof runTaskApp>[2] = {}): Promise<RunTaskApp> => runTaskApp(setup, (d) => (dispose = d), options);

  it("records who gave a team access to a project, changed it and took it away", async () => {
    const a = await app();
    const created = await a.call("POST", "/api/v2/team-projects", { body: grantBody("read") });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    expect((await a.call("PATCH", `/api/v2/team-projects/${id}`, { body: { data: { type: "team-projects", attributes: { access: "admin" } } } })).status).toBe(200);
    expect((await a.call("DELETE", `/api/v2/team-projects/${id}`)).status).toBe(204);
    const create = await theEvent(a.storage, "team-project", "create");
    expect(create.changes).toContainEqual({ field: "teamId", new: "team-devs" });
    expect(create.actor).toMatchObject({ tokenId: await tokenIdOf(a, a.ownerToken), userId: "user-owner" });
    expect((await theEvent(a.storage, "team-project", "update")).changes).toContainEqual({ field: "access", old: "read", new: "admin" });
    expect((await theEvent(a.storage, "team-project", "destroy")).resource.id).toBe(id);
    // A second grant of the pair is refused, and leaves nothing.
    const count = (await eventsOf(a.storage)).length;
    await a.call("POST", "/api/v2/team-projects", { body: grantBody("read") });
    expect((await a.call("POST", "/api/v2/team-projects", { body: grantBody("write") })).status).toBe(422);
    expect((await eventsOf(a.storage)).length).toBe(count + 1);
  });

  it("records API tokens created and revoked, never the secret or its digest", async () => {
    const a = await app();
    const { id, token } = await a.runplane.directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-devs", description: "ci" });
    const digest = (await a.storage.apiTokens.get(id))!.digest;
    expect(await a.runplane.directory.revokeApiToken(id)).toBe(true);
    const mine = (await eventsOf(a.storage)).filter((e) => e.resource.type === "api-token" && e.resource.id === id);
    expect(mine.map((e) => e.action)).toStrictEqual(["create", "revoke"]);
    expect(mine[0]!.actor.kind).toBe("system");
    expect(mine[0]!.changes).toContainEqual({ field: "description", new: "ci" });
    expect(mine[1]!.changes).toContainEqual({ field: "teamId", old: "team-devs" });
    expect(await a.runplane.directory.revokeApiToken(id)).toBe(false);
    expect((await eventsOf(a.storage)).filter((e) => e.resource.id === id)).toHaveLength(2);
    await expectNoSecret(a.storage, [token, digest, a.ownerToken]);
  });

  it("records agent tokens created and revoked over HTTP, never the token", async () => {
    const a = await app();
    await a.runplane.directory.agentPools.create({ id: "apool-1", name: "pool", organization: "acme" });
    const created = await a.call("POST", "/api/v2/agent-pools/apool-1/authentication-tokens", { body: { data: { type: "authentication-tokens", attributes: { description: "rack 1" } } } });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    const secret = created.json.data.attributes.token as string;
    expect((await a.call("DELETE", `/api/v2/authentication-tokens/${id}`)).status).toBe(204);
    expect((await theEvent(a.storage, "agent-token", "create")).changes).toContainEqual({ field: "description", new: "rack 1" });
    expect((await theEvent(a.storage, "agent-token", "revoke")).actor.userId).toBe("user-owner");
    await expectNoSecret(a.storage, [secret]);
  });

  it("records run tasks and workspace attachments, the HMAC key only as changed", async () => {
    const a = await app();
    const taskId = await createTask(a, "scanner", { "hmac-key": HMAC });
    expect((await a.call("PATCH", `/api/v2/tasks/${taskId}`, { body: { data: { type: "tasks", attributes: { "hmac-key": HMAC2, description: "new" } } } })).status).toBe(200);
    const attachment = await attachTask(a, taskId, "mandatory");
    const wsTask = `/api/v2/workspaces/ws-a/tasks/${attachment}`;
    expect((await a.call("PATCH", wsTask, { body: { data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory" } } } })).status).toBe(200);
    expect((await a.call("DELETE", wsTask)).status).toBe(204);
    expect((await a.call("DELETE", `/api/v2/tasks/${taskId}`)).status).toBe(204);
    expect((await theEvent(a.storage, "task", "create")).changes).toContainEqual({ field: "hmacKey", note: "value changed" });
    const update = await theEvent(a.storage, "task", "update");
    expect(update.changes).toStrictEqual([{ field: "description", old: null, new: "new" }, { field: "hmacKey", note: "value changed" }]);
    expect((await theEvent(a.storage, "task", "destroy")).resource.id).toBe(taskId);
    expect((await theEvent(a.storage, "workspace-task", "create")).changes).toContainEqual({ field: "taskId", new: taskId });
    expect((await theEvent(a.storage, "workspace-task", "update")).changes).toStrictEqual([{ field: "enforcementLevel", old: "mandatory", new: "advisory" }]);
    await theEvent(a.storage, "workspace-task", "destroy");
    // A refused task (a name taken) leaves nothing.
    const before = (await eventsOf(a.storage)).length;
    await createTask(a, "twin");
    expect((await a.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "twin", url: "https://twin.example/hook" }) })).status).toBe(422);
    expect((await eventsOf(a.storage)).length).toBe(before + 1);
    await expectNoSecret(a.storage, [HMAC, HMAC2]);
  });

  it("records who overrode a failed stage, with the comment", async () => {
    const a = await app({ overridableTasks: true, trustProxy: 1 });
    const { stageId, resultIds } = await startedRun(a, ["mandatory"]);
    expect((await sendCallback(a, resultIds[0]!, await tokenOf(a, resultIds[0]!), callbackBody("failed"))).status).toBe(200);
    const override = await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`, { body: { comment: "accepted risk" }, headers: { "x-forwarded-for": "192.0.2.44" } });
    expect(override.status).toBe(200);
    const event = await theEvent(a.storage, "task-stage", "override");
    expect(event.resource.id).toBe(stageId);
    expect(event.changes).toContainEqual({ field: "status", old: "awaiting_override", new: "running" });
    expect(event.changes).toContainEqual({ field: "comment", new: "accepted risk" });
    expect(event.request.clientAddress).toBe("192.0.2.44");
    expect(event.actor).toMatchObject({ kind: "token", userId: "user-owner" });
    // A second override is refused (409) and leaves nothing.
    expect((await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`)).status).toBe(409);
    await theEvent(a.storage, "task-stage", "override");
  });

  it("records an agent's registration and deregistration as its token, from its address", async () => {
    const a = await app({ trustProxy: 1 });
    await a.runplane.directory.agentPools.create({ id: "apool-1", name: "pool", organization: "acme" });
    const token = await a.runplane.agentTokens.create("apool-1", { description: "t", createdBy: { type: "organizations", id: "acme" } });
    const protocol = (path: string, body: object) =>
      a.runplane.handler(new Request(`http://localhost/api/agent/v1/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json", "x-forwarded-for": "10.0.0.9" },
        body: JSON.stringify(body),
      }));
    const registered = await protocol("register", { name: "rack-1" });
    expect(registered.status).toBe(201);
    const agentId = ((await registered.json()) as { "agent-id": string })["agent-id"];
    expect((await protocol("deregister", { "agent-id": agentId })).status).toBe(204);
    const register = await theEvent(a.storage, "agent", "register");
    expect(register.resource.id).toBe(agentId);
    expect(register.actor).toMatchObject({ kind: "token", tokenId: token.id, tokenKind: "agent" });
    expect(register.request.clientAddress).toBe("10.0.0.9");
    expect((await theEvent(a.storage, "agent", "deregister")).changes).toStrictEqual([{ field: "status", old: "idle", new: "exited" }]);
    await expectNoSecret(a.storage, [token.token]);
  });

  it("records who deleted an agent (found from outside: DELETE /api/v2/agents/:id left no event)", async () => {
    const a = await app();
    await a.runplane.directory.agentPools.create({ id: "apool-1", name: "pool", organization: "acme" });
    const token = await a.runplane.agentTokens.create("apool-1", { description: "t", createdBy: { type: "organizations", id: "acme" } });
    const protocol = (path: string, body: object) =>
      a.runplane.handler(new Request(`http://localhost/api/agent/v1/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }));
    const agent = { id: ((await (await protocol("register", { name: "rack-1" })).json()) as { "agent-id": string })["agent-id"] };
    expect((await protocol("deregister", { "agent-id": agent.id })).status).toBe(204);
    expect((await a.call("DELETE", `/api/v2/agents/${agent.id}`)).status).toBe(204);
    const deleted = await theEvent(a.storage, "agent", "delete");
    expect(deleted.resource.id).toBe(agent.id);
    expect(deleted.organization).toBe("acme");
    expect(deleted.actor).toMatchObject({ tokenId: await tokenIdOf(a, a.ownerToken), userId: "user-owner" });
    // A second delete finds nothing (404) and leaves nothing.
    const count = (await eventsOf(a.storage)).length;
    expect((await a.call("DELETE", `/api/v2/agents/${agent.id}`)).status).toBe(404);
    expect((await eventsOf(a.storage)).length).toBe(count);
  });
});
