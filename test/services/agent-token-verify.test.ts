import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { sha256Hex } from "../../src/crypto/random.js";
import type { AgentTokenRecord } from "../../src/schemas/records.js";
import { isApiError, type Logger } from "../../src/index.js";
import type { AgentTokenStore, Storage } from "../../src/storage/types.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

const OWNER = { type: "users", id: "user-owner" } as const;

/** A logger that keeps every line, at every level, with its fields. */
function capturingLogger(): Logger & { text(): string } {
  const lines: string[] = [];
  const put = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push(JSON.stringify({ level, message, fields }));
  };
  return { debug: put("debug"), info: put("info"), warn: put("warn"), error: put("error"), text: () => lines.join("\n") };
}

/** Deterministic PRNG (mulberry32), so a failing mutation can be replayed. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** The memory storage with `agentTokens` methods replaced by `override`. */
function withAgentTokens(storage: Storage, override: Partial<AgentTokenStore>): Storage {
  return new Proxy(storage, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== "agentTokens") return value;
      return new Proxy(value as AgentTokenStore, {
        get: (store, name, r) => (name in override ? override[name as keyof AgentTokenStore] : Reflect.get(store, name, r)),
      });
    },
  });
}

async function appWithPools(options: Parameters<typeof createTestApp>[0] = {}): Promise<TestApp> {
  const a = await createTestApp(options);
  await a.runplane.directory.agentPools.create({ id: "apool-a", name: "a", organization: "acme" });
  await a.runplane.directory.agentPools.create({ id: "apool-b", name: "b", organization: "acme" });
  return a;
}

describe("agent token verify", () => {
  it("accepts the issued token string and nothing else: 10,000 mutations never verify", async () => {
    const a = await appWithPools();
    const mine = await a.runplane.agentTokens.create("apool-a", { description: "mine", createdBy: OWNER });
    const other = await a.runplane.agentTokens.create("apool-b", { description: "other", createdBy: OWNER });
    const sameOrg = await a.runplane.agentTokens.create("apool-a", { description: "sibling", createdBy: OWNER });
    const secretOf = (t: string): string => t.slice(t.lastIndexOf(".") + 1);
    const [myId, mySecret, otherSecret] = [mine.id, secretOf(mine.token), secretOf(other.token)];
    expect(await a.runplane.agentTokens.verify(mine.token)).toEqual({ tokenId: myId, agentPoolId: "apool-a" });

    const random = prng(0x5eed);
    const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
    const mutations: ((t: string) => string)[] = [
      // flip one byte of the string
      (t) => {
        const i = random(t.length);
        return t.slice(0, i) + String.fromCharCode(t.charCodeAt(i) ^ (1 + random(255))) + t.slice(i + 1);
      },
      // replace one character by another of the token alphabet
      (t) => {
        const i = random(t.length);
        const c = chars.replace(t[i]!, "")[random(chars.length - 1)]!;
        return t.slice(0, i) + c + t.slice(i + 1);
      },
      (t) => t.slice(0, random(t.length)), // truncated
      (t) => t + Array.from({ length: 1 + random(8) }, () => chars[random(chars.length)]).join(""), // appended
      (t) => t.slice(1 + random(t.length - 1)), // prefix cut
      () => `${other.id}.apool-a.${mySecret}`, // another token's id
      () => `${sameOrg.id}.apool-a.${mySecret}`, // a sibling's id in the same pool
      () => `${myId}.apool-b.${mySecret}`, // another pool id
      () => `${myId}.apool-a.${otherSecret}`, // another token's secret
      () => `${other.id}.apool-b.${mySecret}`, // another token's id and pool
      () => [" ", "\n", "Bearer "][random(3)] + mine.token, // wrapped
      (t) => t.toUpperCase() === t ? t.toLowerCase() : t.toUpperCase(), // case changed
      () => mySecret, // the secret alone
      () => `${myId}..${mySecret}`, // empty pool id
      () => `${myId}.apool-a.apool-a.${mySecret}`, // repeated pool id
    ];
    let tried = 0;
    for (let i = 0; i < 10_000; i++) {
      const candidate = mutations[i % mutations.length]!(mine.token);
      if (candidate === mine.token) continue;
      tried++;
      const verified = await a.runplane.agentTokens.verify(candidate);
      if (verified !== null) throw new Error(`mutation ${i % mutations.length} verified: ${JSON.stringify(candidate)}`);
    }
    expect(tried).toBeGreaterThan(9_900);
    expect(await a.runplane.agentTokens.verify(mine.token)).not.toBeNull();
  });

  it("refuses non-strings, empty and oversized input without throwing", async () => {
    const a = await appWithPools();
    const verify = a.runplane.agentTokens.verify as (token: unknown) => Promise<unknown>;
    for (const input of [undefined, null, 42, {}, "", ".", "..", "x".repeat(10_000)]) expect(await verify(input)).toBeNull();
  });

  it("verifies a token whose host-chosen pool id contains dots", async () => {
    const a = await appWithPools();
    await a.runplane.directory.agentPools.create({ id: "pool.with.dots", name: "dotted", organization: "acme" });
    const created = await a.runplane.agentTokens.create("pool.with.dots", { description: "d", createdBy: OWNER });
    expect(created.token.startsWith(`${created.id}.pool.with.dots.`)).toBe(true);
    expect(await a.runplane.agentTokens.verify(created.token)).toEqual({ tokenId: created.id, agentPoolId: "pool.with.dots" });
  });

  it("records last-used-at on first use and then at most once a minute", async () => {
    let now = Date.UTC(2026, 0, 1);
    const a = await appWithPools({ clock: () => new Date(now) });
    const created = await a.runplane.agentTokens.create("apool-a", { description: "d", createdBy: OWNER });
    expect(created.lastUsedAt).toBeNull();
    now += 1_000;
    await a.runplane.agentTokens.verify(created.token);
    const first = new Date(now).toISOString();
    expect((await a.runplane.agentTokens.get(created.id)).lastUsedAt).toBe(first);
    now += 30_000;
    await a.runplane.agentTokens.verify(created.token);
    expect((await a.runplane.agentTokens.get(created.id)).lastUsedAt).toBe(first);
    now += 30_000;
    await a.runplane.agentTokens.verify(created.token);
    expect((await a.runplane.agentTokens.get(created.id)).lastUsedAt).toBe(new Date(now).toISOString());
  });

  it("never verifies a deleted token, nor a token whose pool was deleted", async () => {
    const a = await appWithPools();
    const gone = await a.runplane.agentTokens.create("apool-a", { description: "gone", createdBy: OWNER });
    const orphan = await a.runplane.agentTokens.create("apool-b", { description: "orphan", createdBy: OWNER });
    await a.runplane.agentTokens.delete(gone.id);
    expect(await a.runplane.agentTokens.verify(gone.token)).toBeNull();
    await expect(a.runplane.agentTokens.delete(gone.id)).rejects.toMatchObject({ status: 404 });
    await a.runplane.directory.agentPools.delete("apool-b");
    expect(await a.runplane.agentTokens.verify(orphan.token)).toBeNull();
    await expect(a.runplane.agentTokens.get(orphan.id)).rejects.toMatchObject({ status: 404 });
  });

  it("does not verify a token deleted between its lookup and the last-used-at write", async () => {
    const storage = createMemoryStorage();
    let deleteFirst: string | null = null;
    const racing = withAgentTokens(storage, {
      async touch(id, at) {
        if (deleteFirst === id) await storage.agentTokens.delete(id);
        return storage.agentTokens.touch(id, at);
      },
    });
    const a = await appWithPools({ storage: racing });
    const created = await a.runplane.agentTokens.create("apool-a", { description: "d", createdBy: OWNER });
    deleteFirst = created.id;
    expect(await a.runplane.agentTokens.verify(created.token)).toBeNull();
  });

  it("keeps token strings and digests out of every log line of a whole lifecycle", async () => {
    const logger = capturingLogger();
    const a = await appWithPools({ logger });
    const res = await a.call("POST", "/api/v2/agent-pools/apool-a/authentication-tokens", {
      body: { data: { type: "authentication-tokens", attributes: { description: "logged?" } } },
    });
    const { id, attributes } = res.json.data;
    const secret: string = attributes.token;
    await a.runplane.agentTokens.verify(secret);
    await a.runplane.agentTokens.verify(`${secret}x`);
    await a.call("GET", "/api/v2/agent-pools/apool-a/authentication-tokens?sort=bogus");
    await a.call("GET", `/api/v2/authentication-tokens/${id}`);
    await a.call("DELETE", `/api/v2/authentication-tokens/${id}`);
    await a.runplane.agentTokens.verify(secret);
    const text = logger.text();
    for (const needle of [secret, secret.slice(secret.lastIndexOf(".") + 1), sha256Hex(secret)]) expect(text).not.toContain(needle);
  });
});

describe("agent token create when storage fails", () => {
  /** Simulates a driver error whose message carries the SQL and the row, the worst case for leaks. */
  const leakyFailure = (record: AgentTokenRecord): Error =>
    Object.assign(new Error(`SQLITE_IOERR: INSERT INTO agent_tokens VALUES ('${record.id}', '${record.digest}')`), { code: "SQLITE_IOERR" });

  const cases: [string, (storage: Storage, seen: AgentTokenRecord[]) => Partial<AgentTokenStore>][] = [
    [
      "insert throws before writing",
      (_storage, seen) => ({
        async insert(record) {
          seen.push(record);
          throw leakyFailure(record);
        },
      }),
    ],
    [
      "insert writes and then throws",
      (storage, seen) => ({
        async insert(record) {
          seen.push(record);
          await storage.agentTokens.insert(record);
          throw leakyFailure(record);
        },
      }),
    ],
    [
      "insert refuses the row",
      (_storage, seen) => ({
        async insert(record) {
          seen.push(record);
          return false;
        },
      }),
    ],
  ];

  it.each(cases)("answers 500 with a bare JSON:API error and leaves no token when %s", async (_name, override) => {
    const storage = createMemoryStorage();
    const seen: AgentTokenRecord[] = [];
    const logger = capturingLogger();
    const a = await appWithPools({ storage: withAgentTokens(storage, override(storage, seen)), logger });

    const res = await a.call("POST", "/api/v2/agent-pools/apool-a/authentication-tokens", {
      body: { data: { type: "authentication-tokens", attributes: { description: "doomed" } } },
    });
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
    expect(res.json).toEqual({ errors: [{ status: "500", title: "internal server error" }] });
    expect(seen).toHaveLength(1);
    const record = seen[0]!;
    for (const needle of [record.digest, "INSERT", "SQLITE", "    at "]) {
      expect(res.text).not.toContain(needle);
      if (needle !== "    at ") expect(logger.text()).not.toContain(needle);
    }
    expect(logger.text()).toContain("agent token create failed");

    expect(await storage.agentTokens.get(record.id)).toBeNull();
    expect(await storage.agentTokens.findByDigest(record.digest)).toBeNull();
    expect((await a.call("GET", "/api/v2/agent-pools/apool-a/authentication-tokens")).json.data).toEqual([]);
  });

  it("rejects the programmatic create with an internal ApiError", async () => {
    const storage = createMemoryStorage();
    const a = await appWithPools({ storage: withAgentTokens(storage, override()), logger: capturingLogger() });
    function override(): Partial<AgentTokenStore> {
      return {
        async insert(record) {
          throw leakyFailure(record);
        },
      };
    }
    const error = await a.runplane.agentTokens.create("apool-a", { description: "d", createdBy: OWNER }).catch((e: unknown) => e);
    expect(isApiError(error)).toBe(true);
    expect(error).toMatchObject({ status: 500, code: "internal" });
    expect(String((error as Error).message)).not.toContain("INSERT");
  });
});
