import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher } from "../../src/index.js";
import type { AuditEvent } from "../../src/schemas/audit.js";
import { STORAGES } from "../helpers/storages.js";
import { runTaskApp, type RunTaskApp } from "../helpers/run-tasks.js";

const DAY = 86_400_000;
const VARS = "/api/v2/workspaces/ws-a/vars";
const variable = (key: string, sensitive = false) => ({ body: { data: { type: "vars", attributes: { key, value: "v", category: "env", sensitive } } } });

// decision D53: retention by the sweeper, and the programmatic API (list, on("audit"), verify).
describe.each(STORAGES)("audit: retention and listeners ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Parameters<typeof runTaskApp>[2] = {}): Promise<RunTaskApp> => runTaskApp(setup, (d) => (dispose = d), options);

  it("keeps events 90 days by default: the dispatcher's sweep removes older ones and the chain still verifies", async () => {
    const a = await app();
    // The setup's own events (its teams, tokens and directory records) are as old as "old".
    const setup = (await a.runplane.audit.list("acme")).total;
    await a.call("POST", VARS, variable("old"));
    a.clock.advance(89 * DAY);
    await a.call("POST", VARS, variable("recent"));
    a.clock.advance(2 * DAY);
    await createDispatcher(a.runplane).tick();
    const left = await a.runplane.audit.list("acme");
    expect(left.items.map((e) => e.changes.find((c) => c.field === "key")?.new)).toStrictEqual(["recent"]);
    expect(await a.runplane.audit.verify("acme")).toStrictEqual([{ organization: "acme", events: 1, headDigest: left.items[0]!.digest, broken: null, pruned: setup + 1 }]);
  });

  it("keeps events as long as audit.retention says", async () => {
    const a = await app({ audit: { retention: "365d" } });
    const setup = (await a.runplane.audit.list("acme")).total;
    await a.call("POST", VARS, variable("old"));
    a.clock.advance(200 * DAY);
    await createDispatcher(a.runplane).tick();
    expect((await a.runplane.audit.list("acme")).total).toBe(setup + 1);
  });

  it("tells on(\"audit\") listeners every recorded change after it committed, and nothing refused", async () => {
    const a = await app();
    const heard: AuditEvent[] = [];
    const stop = a.runplane.audit.on("audit", (event) => heard.push(event));
    await a.call("POST", VARS, variable("k", true));
    await a.call("POST", VARS, variable("k", true)); // 422: a key taken
    expect(heard.map((e) => [e.resource.type, e.action])).toStrictEqual([["var", "create"]]);
    expect((await a.runplane.audit.list("acme", { since: new Date(heard[0]!.at - 1).toISOString() })).items.map((e) => e.id)).toStrictEqual([heard[0]!.id]);
    stop();
    await a.call("POST", VARS, variable("k2"));
    expect(heard).toHaveLength(1);
    expect(() => a.runplane.audit.on("other" as "audit", () => undefined)).toThrow(/unknown event/);
    await expect(a.runplane.audit.list("acme", { since: "last week" })).rejects.toMatchObject({ status: 400 });
  });
});
