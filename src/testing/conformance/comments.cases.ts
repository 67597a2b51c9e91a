import { describe, expect, it } from "vitest";
import type { CommentRecord } from "../../schemas/run-comments.js";
import { race, wins, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { rid } from "./run-task-fixtures.js";

/** A comment with every field set to a non-default value, so a dropped column shows. */
export function comment(overrides: Partial<CommentRecord> = {}): CommentRecord {
  return {
    id: rid("wsc", 1),
    runId: rid("run", 1),
    workspaceId: "ws-AAAAAAAAAAAAAAAA",
    organization: "acme",
    body: "Looks good.\n\n**3** findings, none blocking: ✓",
    authorId: "user-AAAAAAAAAAAAAAAA",
    createdAt: at(3),
    ...overrides,
  };
}

/** Comments on runs (`CommentStore`). */
export function describeCommentCases(ctx: ConformanceContext): void {
  const c = () => ctx.storage.comments;
  const MAX = 1000;

  describe("comments", () => {
    it("returns a promise and resolves null or empty for what is not there", async () => {
      const pendingGet = c().get("none");
      expect(pendingGet).toBeInstanceOf(Promise);
      expect(await pendingGet).toBeNull();
      expect(await c().listByRun("none")).toStrictEqual({ items: [], total: 0 });
      expect(await c().listByRun("none", { offset: 0, limit: 5 })).toStrictEqual({ items: [], total: 0 });
    });

    it("returns an inserted comment unchanged, one without an author too", async () => {
      const anonymous = comment({ id: rid("wsc", 2), authorId: null });
      expect(await c().insert(comment(), MAX)).toStrictEqual({ ok: true });
      expect(await c().insert(anonymous, MAX)).toStrictEqual({ ok: true });
      expect(await c().get(comment().id)).toStrictEqual(comment());
      expect(await c().get(anonymous.id)).toStrictEqual(anonymous);
    });

    it("lists one run's comments by createdAt, then id, paged, with the run's total", async () => {
      const later = comment({ id: rid("wsc", 1), createdAt: at(9) });
      const tieB = comment({ id: rid("wsc", 3), createdAt: at(5) });
      const tieA = comment({ id: rid("wsc", 2), createdAt: at(5) });
      const elsewhere = comment({ id: rid("wsc", 4), runId: rid("run", 2), createdAt: at(0) });
      for (const record of [later, tieB, elsewhere, tieA]) await c().insert(record, MAX);
      expect(await c().listByRun(rid("run", 1))).toStrictEqual({ items: [tieA, tieB, later], total: 3 });
      expect(await c().listByRun(rid("run", 1), { offset: 1, limit: 1 })).toStrictEqual({ items: [tieB], total: 3 });
      expect(await c().listByRun(rid("run", 1), { offset: 5, limit: 2 })).toStrictEqual({ items: [], total: 3 });
      expect(await c().listByRun(rid("run", 2))).toStrictEqual({ items: [elsewhere], total: 1 });
    });

    it("refuses a comment beyond the run's limit with limit, writing nothing, and counts per run", async () => {
      expect(await c().insert(comment(), 2)).toStrictEqual({ ok: true });
      expect(await c().insert(comment({ id: rid("wsc", 2) }), 2)).toStrictEqual({ ok: true });
      expect(await c().insert(comment({ id: rid("wsc", 3) }), 2)).toStrictEqual({ ok: false, reason: "limit" });
      expect(await c().get(rid("wsc", 3))).toBeNull();
      expect(await c().insert(comment({ id: rid("wsc", 4), runId: rid("run", 2) }), 2)).toStrictEqual({ ok: true });
      expect((await c().listByRun(rid("run", 1))).total).toBe(2);
    });

    it("lets exactly one of 10 racing inserts take a run's last place", async () => {
      await c().insert(comment(), 3);
      await c().insert(comment({ id: rid("wsc", 2) }), 3);
      const outcomes = await race(10, (i) => c().insert(comment({ id: rid("wsc", 10 + i) }), 3));
      expect(wins(outcomes)).toBe(1);
      expect(outcomes.filter((o) => !o.ok)).toStrictEqual(Array.from({ length: 9 }, () => ({ ok: false, reason: "limit" })));
      expect((await c().listByRun(rid("run", 1))).total).toBe(3);
    });

    it("throws for a reused id and leaves the stored comment as it was", async () => {
      await c().insert(comment(), MAX);
      await expect(c().insert(comment({ body: "other", runId: rid("run", 2) }), MAX)).rejects.toThrow();
      expect(await c().get(comment().id)).toStrictEqual(comment());
      expect((await c().listByRun(rid("run", 2))).total).toBe(0);
    });

    it("keeps comments through a reopen", async () => {
      await c().insert(comment(), MAX);
      await ctx.reopen();
      expect(await c().get(comment().id)).toStrictEqual(comment());
      expect(await c().listByRun(comment().runId)).toStrictEqual({ items: [comment()], total: 1 });
    });
  });
}
