import { describe, expect, it } from "vitest";
import type { ApiTokenRecord } from "../../schemas/records.js";
import { race, wins, type ConformanceContext } from "./context.js";
import { apiToken, at } from "./fixtures.js";
import { describeApiTokenListCases } from "./api-token-list.cases.js";

const DIGEST_2 = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752";

/** Lookups by id and digest, and inserts refused on a taken id or digest, racing ones too. */
function apiTokenInsertCases(ctx: ConformanceContext, a: ApiTokenRecord): void {
  const tokens = () => ctx.storage.apiTokens;

  it("resolves null for an unknown id or digest", async () => {
    expect(await tokens().get("at-unknown")).toBeNull();
    expect(await tokens().findByDigest(DIGEST_2)).toBeNull();
  });

  it("returns an inserted token unchanged by id and by digest", async () => {
    const team = apiToken({ id: "at-team", digest: DIGEST_2, kind: "team", userId: null, teamId: "team-1", lastUsedAt: at(9) });
    expect(await tokens().insert(a)).toBe(true);
    expect(await tokens().insert(team)).toBe(true);
    expect(await tokens().get(a.id)).toStrictEqual(a);
    expect(await tokens().findByDigest(a.digest)).toStrictEqual(a);
    expect(await tokens().get(team.id)).toStrictEqual(team);
    expect(await tokens().findByDigest(DIGEST_2)).toStrictEqual(team);
  });

  it("refuses an insert whose id is taken and keeps the first token", async () => {
    await tokens().insert(a);
    expect(await tokens().insert({ ...a, digest: DIGEST_2, description: "other" })).toBe(false);
    expect(await tokens().get(a.id)).toStrictEqual(a);
    expect(await tokens().findByDigest(DIGEST_2)).toBeNull();
  });

  it("refuses an insert whose digest is taken, writing nothing", async () => {
    await tokens().insert(a);
    expect(await tokens().insert({ ...a, id: "at-0000000000000002" })).toBe(false);
    expect(await tokens().get("at-0000000000000002")).toBeNull();
    expect(await tokens().findByDigest(a.digest)).toStrictEqual(a);
  });

  it("lets exactly one of 20 racing inserts of the same id win", async () => {
    const digests = Array.from({ length: 20 }, (_, i) => `${i}`.padStart(64, "0"));
    const results = await race(20, (i) => tokens().insert({ ...a, digest: digests[i]! }));
    expect(wins(results)).toBe(1);
    expect((await tokens().get(a.id))?.digest).toBe(digests[results.indexOf(true)]);
  });

  it("lets exactly one of 20 racing inserts of the same digest win", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `at-race-${i}`);
    const results = await race(20, (i) => tokens().insert({ ...a, id: ids[i]! }));
    expect(wins(results)).toBe(1);
    expect((await tokens().findByDigest(a.digest))?.id).toBe(ids[results.indexOf(true)]);
  });
}

/** `touch`: lastUsedAt only, never backwards, and nothing for a token that does not exist. */
function apiTokenTouchCases(ctx: ConformanceContext, a: ApiTokenRecord): void {
  const tokens = () => ctx.storage.apiTokens;

  it("touch sets lastUsedAt and nothing else", async () => {
    await tokens().insert(a);
    expect(await tokens().touch(a.id, at(30))).toBe(true);
    expect(await tokens().get(a.id)).toStrictEqual({ ...a, lastUsedAt: at(30) });
    expect(await tokens().touch(a.id, at(45))).toBe(true);
    expect(await tokens().findByDigest(a.digest)).toStrictEqual({ ...a, lastUsedAt: at(45) });
  });

  it("touch never moves lastUsedAt backwards, and still reports the token exists", async () => {
    await tokens().insert(a);
    await tokens().touch(a.id, at(45));
    expect(await tokens().touch(a.id, at(30))).toBe(true);
    expect((await tokens().get(a.id))?.lastUsedAt).toBe(at(45));
  });

  it("touch of a token that does not exist is false and creates nothing", async () => {
    expect(await tokens().touch(a.id, at(30))).toBe(false);
    expect(await tokens().get(a.id)).toBeNull();
  });
}

/** Deletes, racing ones too, and every write kept through a reopen. */
function apiTokenDeleteAndDurabilityCases(ctx: ConformanceContext, a: ApiTokenRecord): void {
  const tokens = () => ctx.storage.apiTokens;

  it("deletes once: true, then false; neither id nor digest finds it again", async () => {
    await tokens().insert(a);
    expect(await tokens().delete(a.id)).toBe(true);
    expect(await tokens().get(a.id)).toBeNull();
    expect(await tokens().findByDigest(a.digest)).toBeNull();
    expect(await tokens().delete(a.id)).toBe(false);
    expect(await tokens().touch(a.id, at(1))).toBe(false);
  });

  it("lets exactly one of 10 racing deletes report true", async () => {
    await tokens().insert(a);
    expect(wins(await race(10, () => tokens().delete(a.id)))).toBe(1);
  });

  it("keeps inserts, touches and deletes through a reopen", async () => {
    const b = apiToken({ id: "at-0000000000000002", digest: DIGEST_2, kind: "organization", userId: null });
    await tokens().insert(a);
    await tokens().insert(b);
    await tokens().touch(a.id, at(30));
    await tokens().delete(b.id);
    await ctx.reopen();
    expect(await tokens().findByDigest(a.digest)).toStrictEqual({ ...a, lastUsedAt: at(30) });
    expect(await tokens().get(b.id)).toBeNull();
    expect(await tokens().findByDigest(DIGEST_2)).toBeNull();
  });
}

export function describeApiTokenCases(ctx: ConformanceContext): void {
  describe("api tokens", () => {
    const a = apiToken();

    apiTokenInsertCases(ctx, a);
    apiTokenTouchCases(ctx, a);
    apiTokenDeleteAndDurabilityCases(ctx, a);
  });
  describeApiTokenListCases(ctx);
}
