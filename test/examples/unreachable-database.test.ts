import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preflight, runChecks } from "../../examples/server/checks.js";
import { generateKey } from "../../src/index.js";

// The operator's outside try: with PostgreSQL away, serve's one line said
// `PostgreSQL: connect ECONNRESET …` four times, once per check that reads the database.

const root = mkdtempSync(join(tmpdir(), "runplane-unreachable-"));
// A database that resets every connection: each attempt may fail with other words.
const resetting: Server = createServer((socket) => socket.destroy());
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  await new Promise<void>((resolve) => resetting.listen(0, "127.0.0.1", resolve));
  const dataDir = join(root, "data");
  mkdirSync(dataDir, { mode: 0o700 });
  // With a keyring, the keyring, keys, storage and hosts checks all read the database.
  writeFileSync(join(dataDir, "keyring.json"), JSON.stringify({ keys: [{ id: "k1", key: generateKey() }], active: "k1" }), { mode: 0o600 });
  const { port } = resetting.address() as { port: number };
  env = { DATA_DIR: dataDir, DATABASE_URL: `postgres://runplane@127.0.0.1:${port}/runplane`, PORT: "0", INTEGRATION_PORT: "0" };
});
afterAll(async () => {
  await new Promise((resolve) => resetting.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

describe("a PostgreSQL that cannot be reached at start", () => {
  it("is named once in serve's one line", async () => {
    const message = await preflight(env).then(
      () => "started",
      (error: unknown) => (error as Error).message,
    );
    expect(message).toMatch(/^PostgreSQL: .+: check DATABASE_URL and that the server runs$/);
    expect(message.match(/PostgreSQL: /g)).toHaveLength(1);
  });

  it("fails one check in doctor; the others that read the database say they were not checked, and why", async () => {
    const results = await runChecks(env);
    const failed = results.filter(({ verdict }) => "fix" in verdict);
    expect(failed.map((r) => r.name)).toStrictEqual(["keyring"]);
    const skipped = results.filter(({ verdict }) => "skip" in verdict);
    expect(skipped.map((r) => r.name)).toStrictEqual(["keys", "storage", "hosts", "agents"]);
    for (const { verdict } of skipped) expect(verdict).toStrictEqual({ skip: "not checked: PostgreSQL cannot be reached (see keyring)" });
  });
});
