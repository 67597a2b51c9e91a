import { describe, expect, it } from "vitest";
import type { ApiTokenRecord } from "../../schemas/records.js";
import type { ConformanceContext } from "./context.js";
import { apiToken, at } from "./fixtures.js";

const digest = (n: number): string => n.toString(16).padStart(64, "0");

/** A team token of `teamId` in acme, made at second `second`. */
const teamToken = (id: string, n: number, second: number, teamId = "team-owners"): ApiTokenRecord =>
  apiToken({ id, digest: digest(n), kind: "team", userId: null, teamId, createdAt: at(second), description: `token ${id}` });

/** `ApiTokenStore.list`: by organization, optionally by team, ordered and paged. */
export function describeApiTokenListCases(ctx: ConformanceContext): void {
  describe("api tokens: list", () => {
    const tokens = () => ctx.storage.apiTokens;
    const insertAll = async (records: readonly ApiTokenRecord[]) => {
      for (const r of records) expect(await tokens().insert(r)).toBe(true);
    };

    it("lists nothing, with a total of 0, for an organization without tokens", async () => {
      await insertAll([teamToken("at-a", 1, 1)]);
      expect(await tokens().list({ organization: "other" })).toStrictEqual({ items: [], total: 0 });
      expect(await tokens().list({ organization: "other" }, { offset: 0, limit: 10 })).toStrictEqual({ items: [], total: 0 });
    });

    it("lists every token of the organization, of every kind, ordered by createdAt and then id", async () => {
      const user = apiToken({ id: "at-u", digest: digest(9), createdAt: at(2) });
      const org = apiToken({ id: "at-o", digest: digest(8), kind: "organization", userId: null, createdAt: at(0) });
      const late = teamToken("at-late", 1, 5);
      const tieB = teamToken("at-tie-b", 2, 3, "team-devs");
      const tieA = teamToken("at-tie-a", 3, 3);
      await insertAll([late, tieB, user, tieA, org]);
      expect(await tokens().list({ organization: "acme" })).toStrictEqual({ items: [org, user, tieA, tieB, late], total: 5 });
    });

    it("lists only the team's tokens with teamId, never a user or organization token", async () => {
      const owners1 = teamToken("at-1", 1, 1);
      const devs = teamToken("at-2", 2, 2, "team-devs");
      const owners2 = teamToken("at-3", 3, 3);
      // A user token whose teamId is set by mistake still is no team token.
      const stray = apiToken({ id: "at-4", digest: digest(4), teamId: "team-owners", createdAt: at(4) });
      await insertAll([owners2, devs, stray, owners1]);
      expect(await tokens().list({ organization: "acme", teamId: "team-owners" })).toStrictEqual({ items: [owners1, owners2], total: 2 });
      expect(await tokens().list({ organization: "acme", teamId: "team-devs" })).toStrictEqual({ items: [devs], total: 1 });
      expect(await tokens().list({ organization: "acme", teamId: "team-none" })).toStrictEqual({ items: [], total: 0 });
    });

    it("never lists another organization's token, even for the same team id", async () => {
      const mine = teamToken("at-1", 1, 1);
      const theirs = { ...teamToken("at-2", 2, 0), organization: "other" };
      await insertAll([mine, theirs]);
      expect(await tokens().list({ organization: "acme", teamId: "team-owners" })).toStrictEqual({ items: [mine], total: 1 });
      expect(await tokens().list({ organization: "other" })).toStrictEqual({ items: [theirs], total: 1 });
    });

    it("pages by offset and limit with the filter's total, and a page past the end is empty", async () => {
      const all = Array.from({ length: 5 }, (_, i) => teamToken(`at-${i}`, i + 1, i));
      await insertAll([...all].reverse());
      const filter = { organization: "acme", teamId: "team-owners" };
      expect(await tokens().list(filter, { offset: 0, limit: 2 })).toStrictEqual({ items: all.slice(0, 2), total: 5 });
      expect(await tokens().list(filter, { offset: 2, limit: 2 })).toStrictEqual({ items: all.slice(2, 4), total: 5 });
      expect(await tokens().list(filter, { offset: 4, limit: 2 })).toStrictEqual({ items: all.slice(4), total: 5 });
      expect(await tokens().list(filter, { offset: 9, limit: 2 })).toStrictEqual({ items: [], total: 5 });
    });

    it("lists a deleted token no more and shows the latest lastUsedAt, through a reopen", async () => {
      const kept = teamToken("at-1", 1, 1);
      const gone = teamToken("at-2", 2, 2);
      await insertAll([kept, gone]);
      await tokens().touch(kept.id, at(30));
      await tokens().delete(gone.id);
      expect(await tokens().list({ organization: "acme" })).toStrictEqual({ items: [{ ...kept, lastUsedAt: at(30) }], total: 1 });
      await ctx.reopen();
      expect(await tokens().list({ organization: "acme", teamId: "team-owners" })).toStrictEqual({ items: [{ ...kept, lastUsedAt: at(30) }], total: 1 });
    });
  });
}
