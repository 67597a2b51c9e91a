import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { parseKeyring } from "../../examples/server/state.js";
import { createRunplane, generateKey, silentLogger, type KeyringOptions, type Runplane } from "../../src/index.js";
import { run } from "../cli/helpers.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { killSpawnedServers, spawnServer, type SpawnedServer } from "../helpers/reference-server.js";
import { flakyIntegration, writeKeyring } from "./rotation-support.js";

// Decision D29, in real processes: the README's cluster procedure for a key
// rotation, run step by step on two reference hosts (each with its own keyring.json) and a host
// embedding runplane, on one PostgreSQL schema, while deliveries are being retried (the
// integration fails the first attempts; some requests sealed with the old key are held until the
// old key is gone). Nothing is lost, and no attempt fails because of the rotation: every attempt a
// host made reached the integration.

const reachable = await postgresReachable("multihost key rotation");
const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };
const ADDED: KeyringOptions = { keys: [k1, k2], active: "k1" };
const SWITCHED: KeyringOptions = { keys: [k1, k2], active: "k2" };
const RETIRED: KeyringOptions = { keys: [k2], active: "k2" };
const reloaded = (k: KeyringOptions) => new RegExp(`keyring reloaded \\([^)]*\\): keys ${k.keys.map((x) => x.id).join(", ")}, active ${k.active}`);

describe.skipIf(!reachable)("key rotation across hosts on PostgreSQL with deliveries in flight (D29)", () => {
  const schema = uniqueSchema("rotation");
  const root = mkdtempSync(join(tmpdir(), "runplane-rotation-"));
  const dirs = ["a", "b"].map((name) => join(root, name));
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  admin.on("error", () => undefined);
  const token = "rotation-test-admin-token-0123456789";
  // What a failed case leaves open (the loop starting runs, the embedded host), closed before the schema goes.
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    killSpawnedServers();
    await dropSchema(admin, schema);
    await admin.end();
    rmSync(root, { recursive: true, force: true });
  });

  it("follows the README procedure: 0 deliveries lost, 0 attempts failed by the rotation", async () => {
    const integration = await flakyIntegration();
    const settings = { DATABASE_URL, DATABASE_SCHEMA: schema, ADMIN_TOKEN: token, INTEGRATION_URL: integration.receiver.url("/task") };
    for (const dir of dirs) writeKeyring(dir, { keys: [k1], active: "k1" });
    const env = (dir: string) => ({ ...process.env, ...settings, DATA_DIR: dir, PORT: "0", DATABASE_POOL_SIZE: "4", INTEGRATION_HMAC_KEY: "rotation-hmac", LOG_LEVEL: "warn" });
    const hosts: SpawnedServer[] = [];
    for (const dir of dirs) hosts.push(await spawnServer(["src/cli/main.ts", "serve"], env(dir)));
    const origin = hosts[0]!.api.replace(/\/api\/v2$/, "");

    // A third host embedding runplane, reading host A's keyring file; it starts the runs.
    const file = join(dirs[0]!, "keyring.json");
    const storage = await createPostgresStorage(DATABASE_URL, { schema });
    const source = () => parseKeyring(readFileSync(file, "utf8"), file);
    const embedded: Runplane = createRunplane({ storage, logger: silentLogger, publicUrl: origin, keyring: { ...source(), source } });
    cleanups.push(() => embedded.close(), () => integration.receiver.close());
    const results: string[] = [];
    const startRun = async (): Promise<string> => {
      const { run: created, stages } = await embedded.runTasks.createRun({ workspaceId: "ws-demo", configurationVersionId: "cv-demo" });
      await embedded.runTasks.startStage(created.id, "post_plan");
      const [result] = await embedded.runTasks.listResults(stages.find((s) => s.stage === "post_plan")!.id);
      results.push(result!.id);
      return result!.id;
    };
    // Sealed with k1 and held until k1 is gone: retried across the whole rotation.
    for (let i = 0; i < 3; i++) integration.held.add(await startRun());
    await vi.waitFor(() => expect(results.every((id) => integration.receiver.posts.has(id))).toBe(true), { timeout: 20_000, interval: 50 });
    let starting = true;
    const steady = (async () => {
      while (starting) await Promise.all([startRun(), new Promise((r) => setTimeout(r, 300))]);
    })();
    cleanups.push(() => ((starting = false), steady));

    /** One step of the procedure: every host's keyring file changes, every host says it reloaded it. */
    const everyHost = async (keyring: KeyringOptions) => {
      for (const dir of dirs) writeKeyring(dir, keyring);
      await embedded.keyring.reload();
      await Promise.all(hosts.map((h) => h.printed(reloaded(keyring))));
    };
    await everyHost(ADDED);
    await everyHost(SWITCHED);
    const reencrypted = await run(["reencrypt"], { ...settings, DATA_DIR: dirs[0]! });
    expect(reencrypted.code, reencrypted.stderr).toBe(0);
    const doctor = await run(["doctor", "--port", "0"], { ...settings, DATA_DIR: dirs[0]! });
    expect(doctor.stdout).toMatch(/^ok {3}keys: k1: 0 values \(unused: may be removed\); k2 \(active\): \d+ values/m);
    await everyHost(RETIRED);
    starting = false;
    await steady;
    integration.release();

    await vi.waitFor(async () => {
      for (const id of results) expect((await storage.taskResults.get(id))?.status, id).toBe("passed");
    }, { timeout: 90_000, interval: 250 });
    for (const id of results) {
      const [row] = await storage.taskDeliveries.listByResult(id);
      // Every attempt reached the integration: none failed on a payload or key it could not open.
      expect(row!.attempt, id).toBe(integration.receiver.posts.get(id)!.length);
      expect(row!.deliveredAt, id).not.toBeNull();
    }
    expect(results.length).toBeGreaterThan(10);
    expect(integration.callbackErrors).toStrictEqual([]);
    expect(Object.keys(await embedded.sealedValues())).toStrictEqual(["k2"]);
    for (const h of hosts) expect(h.output()).not.toMatch(/could not be opened|cannot be built|keyring not reloaded|keyring reload failed/);
    for (const h of hosts) expect(await h.stop()).toBe(0);
  }, 180_000);
});
