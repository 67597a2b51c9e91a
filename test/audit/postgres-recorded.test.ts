import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import type { Storage } from "../../src/storage/types.js";
import { withAuditEvent } from "../../src/storage/audit-scope.js";
import { auditEvent, walkChain } from "../../src/testing/conformance/audit.cases.js";
import { variable } from "../../src/testing/conformance/fixtures.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { callbackBody, runTaskApp, sendCallback, startedRun, tokenOf } from "../helpers/run-tasks.js";
import { eventsOf, expectNoSecret, theEvent } from "./helpers.js";

// Under CI a missing database fails (postgresReachable), never skips.
const reachable = await postgresReachable("audit on PostgreSQL");
const SECRET = "pg-secret-value-123";

// decision D53: on PostgreSQL an audited write runs through its store pinned to one transaction.
describe.skipIf(!reachable)("audit on PostgreSQL", () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
  pool.on("error", () => undefined);
  const schema = uniqueSchema("audit");
  const opened: Storage[] = [];
  const open = async (from: pg.Pool | string = pool): Promise<Storage> => {
    const storage = await createPostgresStorage(from, { schema });
    opened.push(storage);
    return storage;
  };
  beforeAll(async () => void (await open()));
  afterAll(async () => {
    for (const s of opened) await s.close().catch(() => undefined);
    await dropSchema(pool, schema);
    await pool.end();
  });
  const app = async (options = {}) => {
    await pool.query(`DELETE FROM "${schema}".audit_events; DELETE FROM "${schema}".audit_heads`);
    const storage = await open();
    return runTaskApp({ name: "postgres", create: () => ({ storage, dispose() {} }) }, () => undefined, options);
  };

  it("records a variable's create, update and delete, a team grant, an override and an agent's delete, each with its change", async () => {
    const a = await app({ overridableTasks: true });
    const created = await a.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: "K", value: SECRET, category: "env", sensitive: true } } } });
    const id = created.json.data.id as string;
    await a.call("PATCH", `/api/v2/workspaces/ws-a/vars/${id}`, { body: { data: { type: "vars", id, attributes: { value: `${SECRET}2` } } } });
    expect((await a.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: "K", value: "x", category: "env" } } } })).status).toBe(422);
    await a.call("DELETE", `/api/v2/workspaces/ws-a/vars/${id}`);
    for (const action of ["create", "update", "destroy"]) await theEvent(a.storage, "var", action);
    const grant = await a.call("POST", "/api/v2/team-projects", {
      body: { data: { type: "team-projects", attributes: { access: "admin" }, relationships: { team: { data: { type: "teams", id: "team-devs" } }, project: { data: { type: "projects", id: "prj-a" } } } } },
    });
    expect(grant.status).toBe(201);
    expect((await theEvent(a.storage, "team-project", "create")).changes).toContainEqual({ field: "access", new: "admin" });
    const { stageId, resultIds } = await startedRun(a, ["mandatory"]);
    await sendCallback(a, resultIds[0]!, await tokenOf(a, resultIds[0]!), callbackBody("failed"));
    expect((await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`, { body: { comment: "ok" } })).status).toBe(200);
    await theEvent(a.storage, "task-stage", "override");
    await theEvent(a.storage, "task", "create");
    await theEvent(a.storage, "workspace-task", "create");
    // An agent's delete, in the delete's own transaction (found from outside: it left no event).
    await a.runplane.directory.agentPools.create({ id: "apool-1", name: "pool", organization: "acme" });
    const token = await a.runplane.agentTokens.create("apool-1", { description: "t", createdBy: { type: "organizations", id: "acme" } });
    const protocol = (path: string, body: object) =>
      a.runplane.handler(new Request(`http://localhost/api/agent/v1/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }));
    const agentId = ((await (await protocol("register", { name: "rack-1" })).json()) as { "agent-id": string })["agent-id"];
    expect((await protocol("deregister", { "agent-id": agentId })).status).toBe(204);
    expect((await a.call("DELETE", `/api/v2/agents/${agentId}`)).status).toBe(204);
    expect((await theEvent(a.storage, "agent", "delete")).resource.id).toBe(agentId);
    expect(await a.storage.agents.get(agentId)).toBeNull();
    await expectNoSecret(a.storage, [SECRET, `${SECRET}2`]);
    expect(await walkChain(a.storage.audit!, "acme")).toBeNull();
  });

  it("keeps one linear chain when two hosts (two pools) record changes of one organization at once", async () => {
    await pool.query(`DELETE FROM "${schema}".audit_events; DELETE FROM "${schema}".audit_heads; DELETE FROM "${schema}".variables`);
    const hosts = [await open(DATABASE_URL), await open(DATABASE_URL)];
    const writes = Array.from({ length: 30 }, (_, i) => {
      const host = hosts[i % 2]!;
      const record = variable({ id: `var-${String(i).padStart(16, "0")}`, key: `k${i}` });
      return i % 3 === 0 ? host.audit!.append(auditEvent(i)) : withAuditEvent(auditEvent(i), () => host.variables.insert(record));
    });
    await Promise.all(writes);
    const events = await eventsOf(hosts[0]!);
    expect(events).toHaveLength(30);
    expect(events.map((e) => e.seq)).toStrictEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(await walkChain(hosts[1]!.audit!, "acme")).toBeNull();
    expect((await hosts[0]!.variables.list({ kind: "workspace", id: "ws-AAAAAAAAAAAAAAAA" })).total).toBe(20);
  });

  it("starts the chain of a new organization once when two hosts record its first events at the same moment (D64)", async () => {
    const hosts = [await open(DATABASE_URL), await open(DATABASE_URL)];
    const organizations = Array.from({ length: 8 }, (_, i) => `neworg-${i}-${Date.now()}`);
    await Promise.all(
      organizations.flatMap((organization, o) =>
        hosts.map((host, h) => {
          const n = o * 2 + h;
          const record = variable({ id: `var-first${String(n).padStart(11, "0")}`, key: `first${n}` });
          return withAuditEvent(auditEvent(n, { organization }), () => host.variables.insert(record));
        }),
      ),
    );
    for (const organization of organizations) {
      expect((await eventsOf(hosts[0]!, organization)).map((e) => e.seq)).toStrictEqual([1, 2]);
      expect(await walkChain(hosts[1]!.audit!, organization)).toBeNull();
    }
  });
});
