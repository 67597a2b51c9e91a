import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { Logger } from "../../src/index.js";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createTestApp, varsBody } from "../helpers/app.js";
import { sqliteFileSetup } from "../helpers/storages.js";

/** A logger that keeps every line, at every level, with its fields. */
function capturingLogger() {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const put = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push({ level, message, ...(fields ? { fields } : {}) });
  };
  const logger: Logger = { debug: put("debug"), info: put("info"), warn: put("warn"), error: put("error") };
  return { ...logger, lines, text: () => lines.map((l) => JSON.stringify(l)).join("\n") };
}

describe("sensitive values never leave through the API, storage or logs (D10, D11)", () => {
  let dispose = () => {};
  afterEach(() => dispose());

  it("keeps a random canary out of every response, the SQLite file, its WAL and captured logs", async () => {
    const canary = `canary-${randomBytes(16).toString("hex")}`;
    const setup = sqliteFileSetup();
    dispose = setup.dispose;
    const logger = capturingLogger();
    const a = await createTestApp({ storage: setup.storage, logger });
    const responses: string[] = [];
    const call = async (...args: Parameters<typeof a.call>) => {
      const res = await a.call(...args);
      responses.push(res.text, JSON.stringify([...res.headers]));
      return res;
    };

    const v = await call("POST", "/api/v2/workspaces/ws-a/vars", { body: varsBody({ key: "secret", value: canary, category: "env", sensitive: true }) });
    expect(v.status).toBe(201);
    const p = await call("POST", "/api/v2/policy-sets/polset-a/parameters", { body: varsBody({ key: "secret", value: canary, category: "policy-set", sensitive: true }) });
    expect(p.status).toBe(201);
    const vid = v.json.data.id;
    await call("GET", "/api/v2/workspaces/ws-a/vars");
    await call("GET", `/api/v2/workspaces/ws-a/vars/${vid}`);
    await call("PATCH", `/api/v2/workspaces/ws-a/vars/${vid}`, { body: varsBody({ value: `${canary}-2` }) });
    await call("PATCH", `/api/v2/workspaces/ws-a/vars/${vid}`, { body: varsBody({ key: "renamed" }) });
    await call("PATCH", `/api/v2/workspaces/ws-a/vars/${vid}`, { body: varsBody({ sensitive: false }) });
    await call("POST", "/api/v2/workspaces/ws-a/vars", { body: varsBody({ key: "secret", value: canary, category: "env", sensitive: true }) });
    await call("GET", "/api/v2/policy-sets/polset-a/parameters?page[size]=5");
    await call("GET", `/api/v2/policy-sets/polset-a/parameters/${p.json.data.id}`);

    // The plaintext still reaches the host's run through the programmatic API.
    expect((await a.runplane.variables.resolveForRun("ws-a"))[0]!.value).toBe(`${canary}-2`);

    const needle = Buffer.from(canary, "utf8");
    for (const text of responses) expect(text).not.toContain(canary);
    expect(logger.text()).not.toContain(canary);
    const files = [setup.file, `${setup.file}-wal`].filter(existsSync);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(readFileSync(file).includes(needle)).toBe(false);
  });

  // Database errors quote the offending values in their messages: the log says which
  // kind of error failed the request, and nothing of what it said.
  it("logs a failed request's error by its name, never by its message, at debug level too", async () => {
    const canary = `canary-${randomBytes(16).toString("hex")}`;
    const storage = createMemoryStorage();
    storage.variables.list = async () => {
      throw Object.assign(new Error(`duplicate key value violates unique constraint: (value)=(${canary})`), { name: "DatabaseError", code: "23505" });
    };
    const logger = capturingLogger();
    const a = await createTestApp({ storage, logger });
    const res = await a.call("GET", "/api/v2/workspaces/ws-a/vars");
    expect(res.status).toBe(500);
    expect(res.text).not.toContain(canary);
    expect(logger.lines.filter((l) => l.level === "error")).toStrictEqual([
      { level: "error", message: "request failed", fields: expect.objectContaining({ path: "/api/v2/workspaces/ws-a/vars", error: "DatabaseError" }) },
    ]);
    for (const line of logger.lines) expect(JSON.stringify(line)).not.toContain(canary);
    // The debug line still says where it failed.
    expect(logger.lines.find((l) => l.level === "debug")?.fields).toStrictEqual({ stack: expect.stringMatching(/^DatabaseError\n\s+at /) });
    await a.runplane.close();
  });
});
