import { describe, expect, it } from "vitest";
import type { AgentRecord } from "../../schemas/agents.js";
import { race, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { delivery, result, rid, runTask, run, stage, started } from "./run-task-fixtures.js";

const POOL = "apool-AAAAAAAAAAAAAAAA";
const POOL2 = "apool-BBBBBBBBBBBBBBBB";

const agent = (n: number, overrides: Partial<AgentRecord> = {}): AgentRecord => ({
  id: rid("agent", n),
  agentPoolId: POOL,
  tokenId: "at-AAAAAAAAAAAAAAAA",
  name: `agent ${n}`,
  status: "idle",
  ipAddress: "10.0.0.7",
  lastPingAt: at(10),
  createdAt: at(1),
  ...overrides,
});

/** Decision D34: `AgentStore`, one case per sentence of its JSDoc (`src/storage/agents-types.ts`). */
function agentStoreCases(ctx: ConformanceContext): void {
  const agents = () => ctx.storage.agents;
  const page = { offset: 0, limit: 20 };

  describe("agents: insert, get, list", () => {
    it("returns an inserted agent unchanged, one without a name too; null for an unknown id", async () => {
      const bare = agent(2, { name: null });
      expect(await agents().insert(agent(1))).toBe(true);
      expect(await agents().insert(bare)).toBe(true);
      expect(await agents().get(agent(1).id)).toStrictEqual(agent(1));
      expect(await agents().get(bare.id)).toStrictEqual(bare);
      expect(await agents().get("agent-none")).toBeNull();
    });

    it("refuses an id that is taken, changing nothing; one of 10 racing inserts wins", async () => {
      await agents().insert(agent(1));
      expect(await agents().insert(agent(1, { name: "other" }))).toBe(false);
      expect(await agents().get(agent(1).id)).toStrictEqual(agent(1));
      const results = await race(10, (i) => agents().insert(agent(5, { name: `racer ${i}` })));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it("lists one pool's agents by createdAt, then id, paged in the store, with the pool's total", async () => {
      const list = [agent(3, { createdAt: at(2) }), agent(2, { createdAt: at(1) }), agent(1, { createdAt: at(2) }), agent(4, { agentPoolId: POOL2 })];
      for (const a of list) await agents().insert(a);
      expect(await agents().listByPool(POOL, {}, page)).toStrictEqual({ items: [list[1], list[2], list[0]], total: 3 });
      expect(await agents().listByPool(POOL, {}, { offset: 1, limit: 1 })).toStrictEqual({ items: [list[2]], total: 3 });
      expect(await agents().listByPool(POOL2, {}, page)).toStrictEqual({ items: [list[3]], total: 1 });
      expect(await agents().listByPool("apool-none", {}, page)).toStrictEqual({ items: [], total: 0 });
    });

    it("lists only agents whose last ping is at or after lastPingSince, and counts only those", async () => {
      for (const [n, ping] of [[1, 5], [2, 10], [3, 15]] as const) await agents().insert(agent(n, { lastPingAt: at(ping), createdAt: at(n) }));
      const since = await agents().listByPool(POOL, { lastPingSince: at(10) }, page);
      expect(since).toStrictEqual({ items: [agent(2, { lastPingAt: at(10), createdAt: at(2) }), agent(3, { lastPingAt: at(15), createdAt: at(3) })], total: 2 });
      expect((await agents().listByPool(POOL, { lastPingSince: at(16) }, page)).total).toBe(0);
    });
  });

}

/** Decision D34: an agent's reports and status changes (`ping`, `setStatus`). */
function agentReportCases(ctx: ConformanceContext): void {
  const agents = () => ctx.storage.agents;

  describe("agents: ping and status", () => {
    it("records a report no older than the stored one: ping time and status, nothing else", async () => {
      await agents().insert(agent(1));
      expect(await agents().ping(agent(1).id, at(20), "busy")).toStrictEqual(agent(1, { lastPingAt: at(20), status: "busy" }));
      expect(await agents().ping(agent(1).id, at(20), "idle")).toStrictEqual(agent(1, { lastPingAt: at(20), status: "idle" }));
      expect(await agents().get(agent(1).id)).toStrictEqual(agent(1, { lastPingAt: at(20), status: "idle" }));
    });

    it("ignores an older report and resolves the stored agent; null for an unknown one, never recreating it", async () => {
      await agents().insert(agent(1));
      expect(await agents().ping(agent(1).id, at(9), "errored")).toStrictEqual(agent(1));
      expect(await agents().ping("agent-none", at(30), "idle")).toBeNull();
      expect(await agents().get("agent-none")).toBeNull();
    });

    it("keeps the latest of 20 racing reports", async () => {
      await agents().insert(agent(1));
      const statuses = ["idle", "busy"] as const;
      await race(20, (i) => agents().ping(agent(1).id, at(100 + ((i * 7) % 20)), statuses[i % 2]!));
      const latest = Array.from({ length: 20 }, (_, i) => i).find((i) => (i * 7) % 20 === 19)!;
      expect(await agents().get(agent(1).id)).toStrictEqual(agent(1, { lastPingAt: at(119), status: statuses[latest % 2]! }));
    });

    it("sets the status only while it is one of the expected ones, null (nothing written) otherwise", async () => {
      await agents().insert(agent(1));
      expect(await agents().setStatus(agent(1).id, ["busy"], "unknown")).toBeNull();
      expect(await agents().setStatus(agent(1).id, ["idle", "busy"], "unknown")).toStrictEqual(agent(1, { status: "unknown" }));
      expect(await agents().setStatus("agent-none", ["idle"], "exited")).toBeNull();
      expect(await agents().get(agent(1).id)).toStrictEqual(agent(1, { status: "unknown" }));
    });

    it("lets exactly one of 10 racing status changes from idle win", async () => {
      await agents().insert(agent(1));
      const results = await race(10, (i) => agents().setStatus(agent(1).id, ["idle"], i % 2 === 0 ? "exited" : "errored"));
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(await agents().get(agent(1).id)).toStrictEqual(winners[0]);
    });

    it("keeps agents, reports and statuses through a reopen", async () => {
      await agents().insert(agent(1));
      await agents().ping(agent(1).id, at(30), "busy");
      await ctx.reopen();
      expect(await agents().get(agent(1).id)).toStrictEqual(agent(1, { lastPingAt: at(30), status: "busy" }));
    });
  });

  describe("agents: delete and prune (decision D46)", () => {
    const agents = () => ctx.storage.agents;
    const page = { offset: 0, limit: 20 };
    it("deletes one agent (true), then finds none (false), leaving the others", async () => {
      await agents().insert(agent(1));
      await agents().insert(agent(2));
      expect(await agents().delete(agent(1).id)).toBe(true);
      expect(await agents().delete(agent(1).id)).toBe(false);
      expect(await agents().get(agent(1).id)).toBeNull();
      expect((await agents().listByPool(POOL, {}, page)).items.map((a) => a.id)).toStrictEqual([agent(2).id]);
    });

    it("prunes at most `limit` agents whose last report is before `before`, oldest report first, of any pool", async () => {
      await agents().insert(agent(1, { lastPingAt: at(30) }));
      await agents().insert(agent(2, { lastPingAt: at(10), agentPoolId: POOL2 }));
      await agents().insert(agent(3, { lastPingAt: at(20), status: "exited" }));
      await agents().insert(agent(4, { lastPingAt: at(40) }));
      expect(await agents().prune(at(40), 2)).toBe(2);
      expect(await agents().get(agent(2).id)).toBeNull();
      expect(await agents().get(agent(3).id)).toBeNull();
      expect(await agents().prune(at(40), 2)).toBe(1);
      expect(await agents().prune(at(40), 2)).toBe(0);
      expect((await agents().listByPool(POOL, {}, page)).items.map((a) => a.id)).toStrictEqual([agent(4).id]);
    });
  });
}

/** Decision D34: a run task names its pool, and a result keeps the pool it was started with. */
function agentPoolReferenceCases(ctx: ConformanceContext): void {
  const s = () => ctx.storage;

  describe("run tasks and results: the agent pool", () => {
    it("keeps a task's pool and a null one; counts the tasks naming a pool, across organizations", async () => {
      const direct = runTask({ id: rid("task", 2), name: "direct", agentPoolId: null });
      const elsewhere = runTask({ id: rid("task", 3), organization: "other" });
      for (const t of [runTask(), direct, elsewhere]) await s().runTasks.insert(t);
      expect(await s().runTasks.get(direct.id)).toStrictEqual(direct);
      expect(await s().runTasks.countByAgentPool(POOL)).toBe(2);
      expect(await s().runTasks.countByAgentPool(POOL2)).toBe(0);
      await s().runTasks.update({ ...runTask(), agentPoolId: POOL2, version: 2 }, 1);
      expect(await s().runTasks.countByAgentPool(POOL)).toBe(1);
      expect(await s().runTasks.countByAgentPool(POOL2)).toBe(1);
      await s().runTasks.delete(elsewhere.id);
      expect(await s().runTasks.countByAgentPool(POOL)).toBe(0);
    });

    it("writes each result's agent pool with its start, whatever it was before", async () => {
      const st = stage();
      const before = [result({ agentPoolId: null }), result({ id: rid("taskrs", 2), position: 1 })];
      await s().runs.create(run(), [st], before);
      const writes = before.map((r, i) => ({
        next: { ...r, accessTokenDigest: `digest-${i}`, agentPoolId: i === 0 ? POOL2 : null, version: 2, updatedAt: at(5) },
        expected: { statuses: ["pending" as const], version: 1 },
      }));
      const deliveries = before.map((r, i) => delivery({ id: rid("dlv", i + 1), taskResultId: r.id }));
      await s().taskStages.start(started(st), { statuses: ["pending"], version: 1 }, writes, deliveries);
      expect(await s().taskResults.listByStage(st.id)).toStrictEqual(writes.map((w) => w.next));
    });
  });
}

export function describeAgentCases(ctx: ConformanceContext): void {
  agentStoreCases(ctx);
  agentReportCases(ctx);
  agentPoolReferenceCases(ctx);
}
