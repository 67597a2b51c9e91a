import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listen, startIntegration } from "../../examples/server/integration.js";
import { authorized, killAll, run, serve } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "runplane-cli-serve-"));
let n = 0;
const fresh = () => join(root, `d${n++}`);
afterAll(() => {
  killAll();
  rmSync(root, { recursive: true, force: true });
});

const vars = (api: string) => `${api}/workspaces/ws-demo/vars`;

describe("runplane serve", () => {
  it("serves the API with a printed owners token, holds the data directory's lock while it runs and frees it on exit", async () => {
    const dir = fresh();
    const s = await serve(dir);
    expect((await fetch(vars(s.api), { headers: authorized(s.token) })).status).toBe(200);
    expect(readFileSync(join(dir, "server.lock"), "utf8")).toBe(`${s.child.pid}\n${JSON.stringify({ port: s.port, integrationPort: Number(/integration: http:\/\/127\.0\.0\.1:(\d+)/.exec(s.output())?.[1]) })}\n`);
    expect(await s.stop()).toBe(0);
    expect(existsSync(join(dir, "server.lock"))).toBe(false);
  });

  it("refuses a second server on the same data directory in one line, exit 1, and the first one's token stays valid", async () => {
    const dir = fresh();
    const first = await serve(dir);
    const second = await run(["serve", "--port", "0", "--integration-port", "0", "--data-dir", dir]);
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(`runplane serve: data directory ${dir} is locked by another runplane server (pid ${first.child.pid}): stop it, or use another --data-dir\n`);
    expect((await fetch(vars(first.api), { headers: authorized(first.token) })).status).toBe(200);
    expect(await first.stop()).toBe(0);
  });

  it("takes over a stale lock left by a server that died", async () => {
    const dir = fresh();
    const s = await serve(dir);
    expect(await s.stop()).toBe(0);
    // The pid of a process that has exited: a crashed server's lock.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    writeFileSync(join(dir, "server.lock"), String(dead));
    const again = await serve(dir);
    expect(readFileSync(join(dir, "server.lock"), "utf8").split("\n")[0]).toBe(String(again.child.pid));
    expect(await again.stop()).toBe(0);
  });

  it("says in one line that the port is taken, exit 1, without a stack", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const result = await run(["serve", "--port", String(port), "--integration-port", "0", "--data-dir", fresh()]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`runplane serve: PORT (--port): port ${port} on 127.0.0.1 is taken by another process: stop it, or choose another port (0: any free one)\n`);
      // The bundled integration's port too, named as its own setting.
      const integration = await run(["serve", "--port", "0", "--integration-port", String(port), "--data-dir", fresh()]);
      expect(integration.code).toBe(1);
      expect(integration.stderr).toBe(`runplane serve: INTEGRATION_PORT (--integration-port): port ${port} on 127.0.0.1 is taken by another process: stop it, or choose another port (0: any free one)\n`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("lets run tasks reach a loopback port EGRESS_ALLOW names, and no other; says so, and how to give curl the ADMIN_TOKEN", async () => {
    const named = await startIntegration({ hmacKey: "k".repeat(32), port: 0 });
    const unnamed = await startIntegration({ hmacKey: "k".repeat(32), port: 0 });
    const adminToken = "an-admin-token-for-the-egress-test";
    try {
      const s = await serve(fresh(), ["--admin-token", adminToken, "--egress-allow", named.allow]);
      const create = (url: string) =>
        fetch(`${s.api}/organizations/demo/tasks`, {
          method: "POST",
          headers: authorized(adminToken),
          body: JSON.stringify({ data: { type: "tasks", attributes: { name: `t-${new URL(url).port}`, url, "hmac-key": "k".repeat(32) } } }),
        });
      expect((await create(named.url)).status).toBe(201);
      const refused = await create(unnamed.url);
      expect(refused.status).toBe(422);
      expect(JSON.stringify(await refused.json())).toContain("The run task URL is not allowed");

      const banner = s.output();
      expect(banner).toContain(`egress: run tasks may reach public addresses, the example integration (127.0.0.1:`);
      expect(banner).toContain(` and EGRESS_ALLOW ${named.allow}\n`);
      // The curl lines read $ADMIN_TOKEN, which the shell they are pasted into may not have.
      expect(banner).toMatch(/\n {2}# the lines read \$ADMIN_TOKEN: first, in the shell you paste them into, export ADMIN_TOKEN=<the ADMIN_TOKEN this server was started with>\n {2}curl -s -H "Authorization: Bearer \$ADMIN_TOKEN"/);
      expect(banner).not.toContain(adminToken);
      expect(await s.stop()).toBe(0);
    } finally {
      await named.close();
      await unnamed.close();
    }
  });

  it("blames a port it cannot bind on the setting that chose it", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await expect(listen(() => new Response(), port, "127.0.0.1", "INTEGRATION_PORT")).rejects.toThrow(
        `INTEGRATION_PORT (--integration-port): port ${port} on 127.0.0.1 is taken by another process`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("names the keyring file that holds a bad key id, in one line", async () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "keyring.json"), JSON.stringify({ keys: [{ id: "bad id!", key: Buffer.alloc(32).toString("base64") }] }));
    const result = await run(["serve", "--port", "0", "--integration-port", "0", "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`runplane serve: ${join(dir, "keyring.json")}: keyring key id "bad id!" must be 1-64 of [A-Za-z0-9_-]\n`);
  });

  it("refuses a keyring with a bad key in one line, exit 1", async () => {
    const keyring = JSON.stringify({ keys: [{ id: "k1", key: Buffer.alloc(16).toString("base64") }] });
    const result = await run(["serve", "--port", "0", "--integration-port", "0", "--data-dir", fresh(), "--keyring", keyring]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^runplane serve: RUNPLANE_KEYRING: keyring key "k1" must be 32 bytes of base64 .*runplane keygen.*\n$/);
  });
});
