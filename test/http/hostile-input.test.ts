import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { createTestApp, varsBody, type TestApp } from "../helpers/app.js";

// Hostile input (decision D26): a deeply nested body and an absurd page number are the caller's
// error (400, 422), never a 500, whoever sends them.

const nested = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);

let app: TestApp;
afterEach(async () => app?.runplane.close());

describe("hostile input: nested bodies", () => {
  it("answers 400 to a body nested 3,000 levels deep, and never a 500 without a credential", async () => {
    app = await createTestApp();
    const owner = await app.call("POST", "/api/v2/workspaces/ws-a/vars", { raw: nested(3000) });
    expect(owner.status).toBe(400);
    expect(owner.json.errors[0].detail).toMatch(/nested deeper than 64/);
    // Without a credential the answer is the missing credential's, never a 500.
    expect((await app.call("POST", "/api/v2/workspaces/ws-a/vars", { raw: nested(3000), token: null })).status).toBe(401);
    const callback = await app.call("PATCH", "/api/v2/task-results/taskrs-0000000000000000/callback", { raw: nested(3000), token: null });
    expect(callback.status).toBeLessThan(500);
  });

  it("accepts 64 levels and refuses 65, objects and arrays alike", async () => {
    app = await createTestApp();
    const objects = (depth: number): string => '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
    // 64 levels are read: what comes back is the vars schema's own verdict, at the top.
    for (const raw of [nested(64), objects(64)]) {
      const res = await app.call("POST", "/api/v2/workspaces/ws-a/vars", { raw });
      expect(res.status).toBe(422);
      expect(res.json.errors[0].source).toStrictEqual({ pointer: "/data" });
    }
    expect((await app.call("POST", "/api/v2/workspaces/ws-a/vars", { raw: nested(65) })).status).toBe(400);
    expect((await app.call("POST", "/api/v2/workspaces/ws-a/vars", { raw: objects(65) })).status).toBe(400);
  });
});

describe("hostile input: body limits and text", () => {
  const MIB = 1024 * 1024;
  /** A valid vars body padded with trailing spaces (still valid JSON) to exactly `bytes` bytes. */
  const padded = (key: string, bytes: number): string => {
    const text = JSON.stringify(varsBody({ key, value: "v", category: "env" }));
    return text + " ".repeat(bytes - Buffer.byteLength(text));
  };

  it("reads a body of exactly 1 MiB and refuses one byte more with 413, declared or streamed", async () => {
    app = await createTestApp();
    const post = (raw: string, declare: boolean) =>
      app.call("POST", "/api/v2/workspaces/ws-a/vars", { raw, headers: declare ? { "content-length": String(Buffer.byteLength(raw)) } : {} });
    expect((await post(padded("streamed", MIB), false)).status).toBe(201);
    expect((await post(padded("declared", MIB), true)).status).toBe(201);
    for (const declare of [false, true]) {
      const over = await post(padded(`over-${declare}`, MIB + 1), declare);
      expect(over.status).toBe(413);
      expect(over.json.errors[0].title).toBe("payload too large");
    }
    const keys = (await app.runplane.variables.resolveForRun("ws-a")).map((v) => v.key).sort();
    expect(keys).toStrictEqual(["declared", "streamed"]);
  });

  it("refuses a lone surrogate in an object key as it does in a value (400), storing nothing", async () => {
    app = await createTestApp();
    for (const raw of ['{"data":{"type":"vars","attributes":{"key":"k","category":"env","\\ud800":"x"}}}', '{"data":{"type":"vars","attributes":{"key":"k\\udc00","category":"env"}}}']) {
      const res = await app.call("POST", "/api/v2/workspaces/ws-a/vars", { raw });
      expect(res.status, raw).toBe(400);
      expect(res.json.errors[0].detail).toBe("The request body contains a lone UTF-16 surrogate");
    }
    expect(await app.runplane.variables.resolveForRun("ws-a")).toStrictEqual([]);
  });
});

// Found from outside: a NUL in any stored text was a 500 on PostgreSQL (its text type cannot hold
// one), and bytes that are not UTF-8 were stored as replacement characters.
describe("hostile input: characters no text may hold", () => {
  it("refuses a NUL character in a value or a key (400) on every storage, storing nothing", async () => {
    app = await createTestApp({ storage: createSqliteStorage(new Database(":memory:")) });
    for (const raw of ['{"data":{"type":"vars","attributes":{"key":"a\\u0000b","value":"v","category":"env"}}}', '{"data":{"type":"vars","attributes":{"key":"k","value":"v\\u0000","category":"env"}}}', '{"data":{"type":"vars","attributes":{"key":"k","category":"env","x\\u0000":1}}}']) {
      const res = await app.call("POST", "/api/v2/workspaces/ws-a/vars", { raw });
      expect(res.status, raw).toBe(400);
      expect(res.json.errors[0].detail).toBe("The request body contains a NUL character (U+0000), which no text value may hold");
    }
    expect(await app.runplane.variables.resolveForRun("ws-a")).toStrictEqual([]);
  });

  it("refuses a body that is not UTF-8 (400), storing nothing", async () => {
    app = await createTestApp();
    const bytes = Buffer.concat([Buffer.from('{"data":{"type":"vars","attributes":{"key":"k'), Buffer.from([0xff, 0xfe]), Buffer.from('","value":"v","category":"env"}}}')]);
    const res = await app.runplane.handler(
      new Request("http://localhost/api/v2/workspaces/ws-a/vars", { method: "POST", headers: { authorization: `Bearer ${app.ownerToken}`, "content-type": "application/vnd.api+json" }, body: bytes }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).errors[0].detail).toBe("The request body is not valid UTF-8");
    expect(await app.runplane.variables.resolveForRun("ws-a")).toStrictEqual([]);
  });
});

describe("hostile input: page numbers", () => {
  it("answers 422 to page[number] beyond 1,000,000 on a list stored in SQLite, and serves 1,000,000 itself", async () => {
    app = await createTestApp({ storage: createSqliteStorage(new Database(":memory:")) });
    const tasks = "/api/v2/organizations/acme/tasks";
    const huge = await app.call("GET", `${tasks}?page[number]=99999999999999999999`);
    expect(huge.status).toBe(422);
    expect(huge.json.errors[0].source).toStrictEqual({ parameter: "page[number]" });
    expect((await app.call("GET", `${tasks}?page[number]=1000001`)).status).toBe(422);
    const last = await app.call("GET", `${tasks}?page[number]=1000000`);
    expect(last.status).toBe(200);
    expect(last.json.data).toStrictEqual([]);
  });
});

describe("hostile input: NUL in a path", () => {
  // No stored id holds NUL (PostgreSQL text cannot): the path names nothing, before any credential
  // or storage read (a review found PostgreSQL failing the other reads of the turn on one).
  it("answers 404 whoever asks, and the same request without NUL still works", async () => {
    app = await createTestApp();
    for (const path of ["/api/v2/workspaces/%00/vars", "/api/v2/workspaces/ws-a%00/vars", "/api/v2/task-results/%00/callback"]) {
      expect((await app.call("GET", path, { token: null })).status, path).toBe(404);
    }
    expect((await app.call("GET", "/api/v2/workspaces/ws-a/vars")).status).toBe(200);
  });
});
