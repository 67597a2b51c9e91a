import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../src/index.js";
import { startLoopbackServer } from "../helpers/loopback-server.js";
import { createResponseChecker } from "../helpers/openapi-check.js";
import { killSpawnedServers, spawnServer, type SpawnedServer } from "../helpers/reference-server.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "runplane-server-"));

type Started = SpawnedServer;

/** Starts the reference server the way `npm start` does (tsx), on an ephemeral port. */
const start = (env: Record<string, string> = {}, dir = dataDir): Promise<Started> =>
  // `npm start` on its embedded SQLite file, even where the environment names a database (CI does).
  spawnServer(["examples/server/main.ts"], { ...process.env, DATABASE_URL: "", PORT: "0", INTEGRATION_PORT: "0", DATA_DIR: dir, ...env });

const stop = (s: Started): Promise<number | null> => s.stop();

const jsonapi = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" });

afterAll(() => {
  killSpawnedServers();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("reference server (npm start)", () => {
  it("serves the API with demo records, a printed owners token and copy-paste curl lines", async () => {
    const s = await start();
    expect(s.token).toMatch(/^at-/);
    expect(s.output()).toContain("curl -s");
    // Found from outside: the banner named every results page but the organization's audit trail.
    expect(s.output()).toMatch(/^audit trail \(owners\): http:\/\/127\.0\.0\.1:\d+\/app\/demo\/-\/audit, GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/organization\/audit-trail; runplane audit verify --data-dir \S+ checks its chain$/m);
    expect(s.output()).toContain(
      "dialect: default (signs with X-SVC-Task-Signature, category word config); go-tfe, the Terraform provider and existing HCP Terraform integrations need RUNPLANE_DIALECT=hcp-terraform",
    );
    // Nothing secret is printed beyond the owners token: not the keyring key, not any other token.
    const keyring = JSON.parse(readFileSync(join(dataDir, "keyring.json"), "utf8")) as { keys: { key: string }[] };
    for (const { key } of keyring.keys) expect(s.output()).not.toContain(key);
    const secretLooking = s.output().match(/[A-Za-z0-9_-]{40,}/g) ?? [];
    expect(secretLooking.every((m) => s.token!.includes(m))).toBe(true);
    expect((await fetch(`${s.api}/ping`)).status).toBe(204);
    // The OpenAPI description, and the server's answers conform to what it describes.
    const served = await fetch(s.api.replace(/\/api\/v2$/, "/openapi.json"));
    expect(served.status).toBe(200);
    const doc = (await served.json()) as OpenApiDocument;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: "/api/v2" }]);
    const conforms = createResponseChecker(doc);

    const vars = `${s.api}/workspaces/ws-demo/vars`;
    const created = await fetch(vars, {
      method: "POST",
      headers: jsonapi(s.token!),
      body: JSON.stringify({ data: { type: "vars", attributes: { key: "region", value: "eu-west-1", category: "env" } } }),
    });
    expect(created.status).toBe(201);
    const createdText = await created.text();
    conforms("POST", vars, created.status, created.headers.get("content-type"), createdText);
    const id = (JSON.parse(createdText) as any).data.id as string;
    const listed = (await (await fetch(vars, { headers: jsonapi(s.token!) })).json()) as any;
    expect(listed.data.map((d: any) => d.attributes.key)).toEqual(["region"]);
    const patched = await fetch(`${vars}/${id}`, {
      method: "PATCH",
      headers: jsonapi(s.token!),
      body: JSON.stringify({ data: { type: "vars", attributes: { value: "us-east-1" } } }),
    });
    expect(((await patched.json()) as any).data.attributes.value).toBe("us-east-1");
    expect((await fetch(`${vars}/${id}`, { method: "DELETE", headers: jsonapi(s.token!) })).status).toBe(204);
    await fetch(vars, {
      method: "POST",
      headers: jsonapi(s.token!),
      body: JSON.stringify({ data: { type: "vars", attributes: { key: "kept", value: "1", category: "env" } } }),
    });
    expect(await stop(s)).toBe(0);

    // A restart keeps the data, revokes the previous printed token and prints a new one.
    const again = await start();
    expect(again.token).not.toBe(s.token);
    const varsAgain = `${again.api}/workspaces/ws-demo/vars`;
    expect((await fetch(varsAgain, { headers: jsonapi(s.token!) })).status).toBe(401);
    const kept = (await (await fetch(varsAgain, { headers: jsonapi(again.token!) })).json()) as any;
    expect(kept.data.map((d: any) => d.attributes.key)).toEqual(["kept"]);
    expect(await stop(again)).toBe(0);
  });

  it("uses ADMIN_TOKEN without printing it, and the hcp-terraform dialect when asked", async () => {
    const admin = "admin-token-for-the-reference-server-test";
    const s = await start({ ADMIN_TOKEN: admin, RUNPLANE_DIALECT: "hcp-terraform" });
    expect(s.output()).toContain("owners token: using ADMIN_TOKEN");
    expect(s.output()).not.toContain(admin);
    expect(s.output()).toContain("dialect: hcp-terraform (signs with X-TFC-Task-Signature, category word terraform)");
    expect(s.output()).not.toContain("RUNPLANE_DIALECT=");
    const res = await fetch(`${s.api}/workspaces/ws-demo/vars`, {
      method: "POST",
      headers: jsonapi(admin),
      body: JSON.stringify({ data: { type: "vars", attributes: { key: "tf", value: "1", category: "terraform" } } }),
    });
    expect(((await res.json()) as any).data.attributes.category).toBe("terraform");

    // The demo, as the host (D24), gives a run's status, plan counts, policy checks and plan log.
    const conforms = createResponseChecker((await (await fetch(s.api.replace(/\/api\/v2$/, "/openapi.json"))).json()) as OpenApiDocument);
    const demo = (await (await fetch(`${s.api.replace(/\/api\/v2$/, "")}/demo/runs`, { method: "POST", headers: jsonapi(admin) })).json()) as { run_id: string };
    const read = async (url: string) => {
      const answer = await fetch(url, { headers: jsonapi(admin) });
      const text = await answer.text();
      conforms("GET", url, answer.status, answer.headers.get("content-type"), text);
      return { status: answer.status, text };
    };
    const run = JSON.parse((await read(`${s.api}/runs/${demo.run_id}/?include=plan`)).text);
    // Both demo stages passed and the demo applied (nothing real, D47): the status and times follow what runplane recorded, none in the future.
    expect(run.data.attributes).toMatchObject({ status: "applied", "has-changes": true, "terraform-version": "1.9.8" });
    expect(run.included[0].attributes).toMatchObject({ status: "finished", "resource-additions": 1, "resource-destructions": 0 });
    const [postPlan] = JSON.parse((await read(`${s.api}/runs/${demo.run_id}/task-stages`)).text).data;
    const plannedAt = Date.parse(run.data.attributes["status-timestamps"]["planned-at"]);
    expect(plannedAt).toBeLessThanOrEqual(Date.parse(postPlan.attributes["status-timestamps"]["running-at"]));
    expect(Date.parse(run.included[0].attributes["status-timestamps"]["finished-at"])).toBe(plannedAt);
    // The demo run's creator is a user of the directory, so `include=created_by` has its users resource.
    const creator = JSON.parse((await read(`${s.api}/runs/${demo.run_id}?include=created_by`)).text);
    expect(creator.data.relationships["created-by"].data).toStrictEqual({ type: "users", id: "user-demo" });
    expect(creator.included).toMatchObject([{ type: "users", id: "user-demo", attributes: { username: "demo" } }]);
    // A mandatory post_plan failure errors the run, as a polling client must see, and no policy check ran.
    const failing = (await (
      await fetch(`${s.api.replace(/\/api\/v2$/, "")}/demo/runs`, { method: "POST", headers: jsonapi(admin), body: JSON.stringify({ message: "please fail" }) })
    ).json()) as { run_id: string; stages: Record<string, string> };
    expect(failing.stages.post_plan).toBe("failed");
    const failed = JSON.parse((await read(`${s.api}/runs/${failing.run_id}?include=plan`)).text);
    expect(failed.data.attributes.status).toBe("errored");
    expect(failed.included[0].attributes.status).toBe("finished");
    expect(JSON.parse((await read(`${s.api}/runs/${failing.run_id}/policy-checks`)).text).data).toEqual([]);
    expect(JSON.parse((await read(`${s.api}/runs/${demo.run_id}/policy-checks`)).text).data[0].attributes.status).toBe("passed");
    // D36: a policy check (the demo names its run) and a run event read by id, as their lists write them.
    const [check] = JSON.parse((await read(`${s.api}/runs/${demo.run_id}/policy-checks`)).text).data;
    expect(JSON.parse((await read(`${s.api}/policy-checks/${check.id}`)).text)).toStrictEqual({ data: check });
    const [event] = JSON.parse((await read(`${s.api}/runs/${demo.run_id}/run-events`)).text).data;
    expect(JSON.parse((await read(`${s.api}/run-events/${event.id}`)).text)).toStrictEqual({ data: event });
    const log = await read(run.included[0].attributes["log-read-url"]);
    expect(log.text).toContain("Plan: 1 to add, 0 to change, 0 to destroy.");
    // D32: the plan's and the apply's logs, at their capability URLs, with no credential at all.
    const apply = JSON.parse((await read(`${s.api}/runs/${demo.run_id}/apply`)).text).data.attributes["log-read-url"];
    for (const [url, words] of [[run.included[0].attributes["log-read-url"], "Plan: 1 to add"], [apply, "Apply complete! Resources: 1 added"]]) {
      const answer = await fetch(url);
      expect(answer.status, url).toBe(200);
      const text = await answer.text();
      expect(text).toContain(words);
      // decision D48: HCP's framing in the hcp-terraform dialect: STX, and ETX once the phase is final.
      expect(text.startsWith("\x02") && text.endsWith("\x03")).toBe(true);
    }
    expect(await stop(s)).toBe(0);
  });

  it("shuts down cleanly on a SIGTERM sent the moment its banner is printed (the handlers come first)", async () => {
    const s = await start({}, mkdtempSync(join(tmpdir(), "runplane-server-sigterm-")));
    expect(await stop(s)).toBe(0);
    expect(s.output()).toContain("received SIGTERM, shutting down");
  });

  it("lets run tasks reach its integration's address and port only, not other loopback ports", async () => {
    const other = await startLoopbackServer();
    try {
      const admin = "admin-token-for-the-reference-server-test";
      const s = await start({ ADMIN_TOKEN: admin });
      const integration = /example integration: (\S+)/.exec(s.output())![1]!;
      const hmacKey = readFileSync(join(dataDir, "integration-hmac-key"), "utf8").trim();
      const create = (name: string, url: string) =>
        fetch(`${s.api}/organizations/demo/tasks`, {
          method: "POST",
          headers: jsonapi(admin),
          body: JSON.stringify({ data: { type: "tasks", attributes: { name, url, "hmac-key": hmacKey } } }),
        });
      // Saving sends the verification request: the integration answers it.
      const allowed = await create("to-integration", integration);
      expect(allowed.status, await allowed.clone().text()).toBe(201);
      const refused = await create("to-other-port", `http://127.0.0.1:${other.port}/hook`);
      expect(refused.status).toBe(422);
      expect(other.connections).toBe(0);
      expect(await stop(s)).toBe(0);
    } finally {
      await other.close();
    }
  });

  // The data directory holds token digests, the keyring and the HMAC key.
  describe("file modes of DATA_DIR", () => {
    const mode = (path: string) => statSync(path).mode & 0o777;
    const admin = "admin-token-for-the-reference-server-test";

    async function writeSomething(s: Started, token = admin): Promise<void> {
      const res = await fetch(`${s.api}/workspaces/ws-demo/vars`, {
        method: "POST",
        headers: jsonapi(token),
        body: JSON.stringify({ data: { type: "vars", attributes: { key: `k${Date.now()}`, value: "1", category: "env" } } }),
      });
      expect(res.status).toBe(201);
    }

    function expectPrivate(dir: string): void {
      expect(mode(dir)).toBe(0o700);
      const files = readdirSync(dir);
      for (const name of ["runplane.db", "runplane.db-wal", "runplane.db-shm", "keyring.json", "integration-hmac-key"]) expect(files).toContain(name);
      for (const name of files) expect(mode(join(dir, name)), name).toBe(0o600);
    }

    it("creates a fresh DATA_DIR 0700 and every file in it 0600, the SQLite WAL and SHM included", async () => {
      const dir = join(dataDir, "fresh", "data");
      const s = await start({ ADMIN_TOKEN: admin }, dir);
      await writeSomething(s);
      expectPrivate(dir);
      // Without ADMIN_TOKEN the server also remembers the token it printed.
      expect(await stop(s)).toBe(0);
      const again = await start({}, dir);
      expect(existsSync(join(dir, "server-state.json"))).toBe(true);
      expectPrivate(dir);
      expect(await stop(again)).toBe(0);
    });

    it("tightens an existing DATA_DIR and files with looser modes at start", async () => {
      const dir = join(dataDir, "loose");
      const first = await start({}, dir);
      await writeSomething(first, first.token!);
      expect(readdirSync(dir)).toContain("server-state.json");
      expect(await stop(first)).toBe(0);
      chmodSync(dir, 0o755);
      for (const name of readdirSync(dir)) chmodSync(join(dir, name), 0o644);
      const s = await start({ ADMIN_TOKEN: admin }, dir);
      await writeSomething(s);
      expectPrivate(dir);
      expect(await stop(s)).toBe(0);
    });
  });
});
