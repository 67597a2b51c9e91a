import { afterEach, describe, expect, it } from "vitest";
import { listDocument, oneDocument, problems } from "./go-tfe-shapes.js";
import { startContractServer, type ContractServer } from "./harness.js";

/**
 * Decision D34 as go-tfe reads it: `Agents.List` (`agent-pools/<id>/agents` with `page[...]` and
 * `filter[last-ping-since]` as go-querystring writes a time: RFC 3339 with the local offset),
 * `Agents.Read` (`agents/<id>`), and a run task's `agent-pool` relationship and a result's
 * `agent-pool-id`, decoded with go-tfe's field names and types (test/fixtures/go-tfe/structs.json).
 */

const agent = (n: number, name: string | null = null) => ({
  id: `agent-${String(n).padStart(16, "0")}`,
  agentPoolId: "apool-a",
  tokenId: "at-contract",
  name,
  status: n === 1 ? ("idle" as const) : ("busy" as const),
  ipAddress: "192.0.2.10",
  lastPingAt: `2026-01-01T00:0${n}:00.000Z`,
  createdAt: `2026-01-01T00:00:0${n}.000Z`,
});

describe("go-tfe decodes the Agents API and a task's agent pool (hcp-terraform dialect)", () => {
  let server: ContractServer | undefined;
  afterEach(async () => server?.close());

  async function start(): Promise<ContractServer> {
    const s = (server = await startContractServer());
    await s.app.runplane.directory.agentPools.create({ id: "apool-a", name: "inside", organization: "acme" });
    await s.app.storage.agents.insert(agent(1, "runner"));
    await s.app.storage.agents.insert(agent(2, null));
    return s;
  }

  it("decodes Agents.List and Agents.Read", async () => {
    const s = await start();
    // go-querystring: `page[number]`, `page[size]`, and the time in RFC 3339 with its offset, escaped.
    const list = await s.call("GET", "/agent-pools/apool-a/agents?filter%5Blast-ping-since%5D=2026-01-01T01%3A02%3A00%2B01%3A00&page%5Bnumber%5D=1&page%5Bsize%5D=20");
    expect(list.status).toBe(200);
    expect(problems(listDocument("Agent"), list.json)).toStrictEqual([]);
    expect(list.json.data.map((a: { id: string }) => a.id)).toStrictEqual([agent(2).id]);
    const all = await s.call("GET", "/agent-pools/apool-a/agents");
    expect(problems(listDocument("Agent"), all.json)).toStrictEqual([]);
    expect(all.json.meta.pagination["total-count"]).toBe(2);
    const one = await s.call("GET", `/agents/${agent(1).id}`);
    expect(problems(oneDocument("Agent"), one.json)).toStrictEqual([]);
    expect(one.json.data.attributes).toStrictEqual({ name: "runner", status: "idle", "ip-address": "192.0.2.10", "last-ping-at": "2026-01-01T00:01:00.000Z" });
    // Agents.Read("nonexistent") is ErrResourceNotFound in go-tfe's integration test.
    expect((await s.call("GET", "/agents/nonexistent")).status).toBe(404);
  });

  it("decodes a run task bound to a pool and its result's agent-pool-id", async () => {
    const s = await start();
    const task = (await s.call("POST", "/organizations/acme/tasks", { body: { data: { type: "tasks", attributes: { name: "scan", url: "https://scan.example/hook", category: "task" } } } })).json.data.id as string;
    const record = (await s.app.storage.runTasks.get(task))!;
    await s.app.storage.runTasks.update({ ...record, agentPoolId: "apool-a", version: record.version + 1 }, record.version);
    const read = await s.call("GET", `/tasks/${task}`);
    expect(problems(oneDocument("RunTask"), read.json)).toStrictEqual([]);
    expect(read.json.data.relationships["agent-pool"]).toStrictEqual({ data: { type: "agent-pools", id: "apool-a" } });

    await s.app.runplane.runTasks.workspaceTasks.create("ws-a", task, { "enforcement-level": "advisory", stages: ["post_plan"] });
    const { run, stages } = await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
    await s.app.runplane.runTasks.startStage(run.id, "post_plan");
    const [result] = await s.app.runplane.runTasks.listResults(stages[0]!.id);
    const res = await s.call("GET", `/task-results/${result!.id}`);
    expect(problems(oneDocument("TaskResult"), res.json)).toStrictEqual([]);
    expect(res.json.data.attributes["agent-pool-id"]).toBe("apool-a");
  });
});
