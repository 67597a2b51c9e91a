import { afterEach, describe, expect, it } from "vitest";
import { STORAGES } from "../helpers/storages.js";
import { runTaskApp, type RunTaskApp } from "../helpers/run-tasks.js";
import type { Storage } from "../../src/storage/types.js";
import { eventsOf } from "./helpers.js";

const eventOf = async (storage: Storage, id: string, action: string) => {
  const found = (await eventsOf(storage)).filter((e) => e.resource.id === id && e.action === action);
  expect(found, `one ${action} event of ${id}`).toHaveLength(1);
  return found[0]!;
};

/**
 * decision D53 (change of 2026-11-29): the host's directory changes are recorded too. Raising a
 * team to owners gives it every permission of the organization: through `runplane.directory` it
 * left no event (found from outside, twice).
 */
describe.each(STORAGES)("audit: directory changes ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (): Promise<RunTaskApp> => runTaskApp(setup, (d) => (dispose = d));

  it("records a team raised to owners, its members changed, and the team deleted", async () => {
    const a = await app();
    const d = a.runplane.directory;
    const team = await d.teams.create({ id: "team-ops", name: "ops", organization: "acme" });
    await d.teams.update(team.id, { owners: true, members: ["user-mallory"] });
    expect(await d.teams.delete(team.id)).toBe(true);
    const create = await eventOf(a.storage, "team-ops", "create");
    expect(create.resource.type).toBe("team");
    expect(create.actor.kind).toBe("system");
    expect(create.changes).toContainEqual({ field: "name", new: "ops" });
    const update = await eventOf(a.storage, "team-ops", "update");
    expect(update.changes).toContainEqual({ field: "owners", old: false, new: true });
    expect(update.changes).toContainEqual({ field: "members", old: "[]", new: '["user-mallory"]' });
    expect(update.changes.map((c) => c.field)).not.toContain("name");
    expect((await eventOf(a.storage, "team-ops", "destroy")).changes).toContainEqual({ field: "owners", old: true });
  });

  it("records projects, workspaces, policy sets and agent pools created, changed and deleted", async () => {
    const a = await app();
    const d = a.runplane.directory;
    const cases = [
      ["project", d.projects, { id: "prj-new", name: "new", organization: "acme" }, { name: "renamed" }],
      ["workspace", d.workspaces, { id: "ws-new", name: "new", organization: "acme", projectId: "prj-a" }, { name: "renamed" }],
      ["policy-set", d.policySets, { id: "polset-new", name: "new", organization: "acme" }, { name: "renamed" }],
      ["agent-pool", d.agentPools, { id: "apool-new", name: "new", organization: "acme" }, { name: "renamed" }],
    ] as const;
    for (const [type, store, input, patch] of cases) {
      await (store.create as (i: object) => Promise<unknown>)(input);
      await (store.update as (id: string, p: object) => Promise<unknown>)(input.id, patch);
      expect(await store.delete(input.id)).toBe(true);
      const mine = (await eventsOf(a.storage)).filter((e) => e.resource.type === type && e.resource.id === input.id);
      expect(mine.map((e) => e.action), type).toStrictEqual(["create", "update", "destroy"]);
      expect(mine[1]!.changes, type).toStrictEqual([{ field: "name", old: "new", new: "renamed" }]);
    }
  });

  it("records an organization's creation first in its own trail, its changes, and its deletion (found from outside)", async () => {
    const a = await app();
    const d = a.runplane.directory;
    await d.organizations.create({ name: "initech", email: "it@initech.example" });
    await d.organizations.update("initech", { email: "sec@initech.example" });
    await expect(d.organizations.create({ name: "initech" })).rejects.toMatchObject({ status: 409 });
    expect(await d.organizations.delete("initech")).toBe(true);
    expect(await d.organizations.delete("initech")).toBe(false);
    const mine = await eventsOf(a.storage, "initech");
    expect(mine.map((e) => [e.seq, e.resource.type, e.resource.id, e.action])).toStrictEqual([
      [1, "organization", "initech", "create"],
      [2, "organization", "initech", "update"],
      [3, "organization", "initech", "destroy"],
    ]);
    expect(mine[1]!.changes).toStrictEqual([{ field: "email", old: "it@initech.example", new: "sec@initech.example" }]);
  });

  // Found from outside: deleting an organization left its teams, workspaces and tokens, and its old
  // owners token kept reading its trail and variables; a new organization of the name inherited them.
  it("refuses to delete an organization that still holds records or API tokens, naming them", async () => {
    const a = await app();
    const d = a.runplane.directory;
    await expect(d.organizations.delete("acme")).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/^organization acme still has 1 project, 2 workspaces, 2 teams, 1 policy set and 2 API tokens: delete them \(revoke the tokens, results-page sign-ins included\) first$/) });
    expect(await d.organizations.get("acme")).not.toBeNull();
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars")).status).toBe(200);
    await d.organizations.create({ name: "empty" });
    await d.agentPools.create({ id: "apool-e", name: "p", organization: "empty" });
    await expect(d.organizations.delete("empty")).rejects.toMatchObject({ status: 409, message: expect.stringContaining("1 agent pool") });
    await d.agentPools.delete("apool-e");
    expect(await d.organizations.delete("empty")).toBe(true);
  });

  // Found from outside: a team created while its organization was deleted outlived it, and an
  // organization created again under the name inherited it (an owners team among them).
  it("refuses to create an organization whose name still holds records of an earlier one", async () => {
    const a = await app();
    const d = a.runplane.directory;
    await d.organizations.create({ name: "gone" });
    await a.storage.organizations.delete("gone"); // as a delete that raced a team's creation leaves it
    await a.storage.teams.insert({ id: "team-left", name: "owners", organization: "gone", visibility: "secret", orgPermissions: [], members: [], owners: true });
    await expect(d.organizations.create({ name: "gone" })).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/^organization gone still has 1 team: delete them/) });
    expect(await d.organizations.get("gone")).toBeNull();
    await a.storage.teams.delete("team-left");
    expect((await d.organizations.create({ name: "gone" })).name).toBe("gone");
  });

  it("records nothing for a directory write that was refused or found nothing", async () => {
    const a = await app();
    const d = a.runplane.directory;
    const before = (await eventsOf(a.storage)).length;
    await d.teams.create({ id: "team-one", name: "one", organization: "acme" });
    await expect(d.teams.create({ id: "team-two", name: "one", organization: "acme" })).rejects.toMatchObject({ status: 409 });
    await expect(d.teams.create({ id: "team-one", name: "other", organization: "acme" })).rejects.toMatchObject({ status: 409 });
    await expect(d.projects.update("prj-none", { name: "x" })).rejects.toMatchObject({ status: 404 });
    expect(await d.policySets.delete("polset-none")).toBe(false);
    expect((await eventsOf(a.storage)).length).toBe(before + 1);
  });
});
