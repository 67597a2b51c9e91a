import { describe, expect, it } from "vitest";
import { createTestApp } from "../helpers/app.js";
import { eventsOf, STORAGES } from "./helpers.js";

const ROUTE = "/api/v2/organization/audit-trail";

/**
 * decision D53 (change of 2026-11-29): the host names who acts through its own code. Found from
 * outside: every `runplane.directory` change (a team raised to owners) read "system / runplane",
 * with no way for the host to say which of its users or services made it.
 */
describe.each(STORAGES)("audit: the host names its actor (%s)", (_name, makeStorage) => {
  it("records directory changes made inside runplane.audit.as under the host's actor, request and address", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    const alice = { description: "alice (admin console)", userId: "user-alice", requestId: "console-req-7", clientAddress: "10.0.0.7" };
    await app.runplane.audit.as(alice, async () => {
      await app.runplane.directory.teams.update("team-devs", { owners: true });
      await app.runplane.variables.create("ws-a", { key: "region", value: "eu-west-1", category: "env" });
    });
    await app.runplane.directory.teams.update("team-devs", { owners: false });
    const mine = (await eventsOf(app.storage)).filter((e) => e.resource.id === "team-devs" || e.resource.type === "var");
    expect(mine.map((e) => [e.resource.type, e.action, e.actor.kind])).toStrictEqual([
      ["team", "create", "system"],
      ["team", "update", "host"],
      ["var", "create", "host"],
      ["team", "update", "system"],
    ]);
    expect(mine[1]!.actor).toStrictEqual({ kind: "host", description: "alice (admin console)", userId: "user-alice", teamId: null, tokenId: null, tokenKind: null });
    expect(mine[1]!.request).toStrictEqual({ id: "console-req-7", clientAddress: "10.0.0.7" });
    const item = ((await app.call("GET", `${ROUTE}?page[size]=1000`)).json.data as { id: string; auth: Record<string, unknown> }[]).find((e) => e.id === mine[1]!.id)!;
    expect(item.auth).toMatchObject({ accessor_id: "user-alice", description: "alice (admin console)", type: "Client", user_id: "user-alice" });
  });

  it("keeps a request's own scope inside it and refuses an actor without a description", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    expect(() => app.runplane.audit.as({ description: "" }, () => undefined)).toThrow(TypeError);
    expect(() => app.runplane.audit.as({ description: "x", requestId: "has spaces" }, () => undefined)).toThrow(/requestId/);
    // Found from outside: a number failed deep inside, and any text passed as an address.
    expect(() => app.runplane.audit.as({ description: "x", userId: 42 as unknown as string }, () => undefined)).toThrow("audit.as: userId must be a string when given");
    expect(() => app.runplane.audit.as({ description: "x", clientAddress: "<b>10.0.0.1</b>\n" }, () => undefined)).toThrow("audit.as: clientAddress must be an IP address");
    const long = "é".repeat(5_000);
    await app.runplane.audit.as({ description: long, teamId: "team-ops" }, () => app.runplane.directory.policySets.create({ id: "polset-z", name: "z", organization: "acme" }));
    const event = (await eventsOf(app.storage)).find((e) => e.resource.id === "polset-z")!;
    expect(event.actor.description).toBe(`${"é".repeat(256)}…`);
    expect(event.actor).toMatchObject({ kind: "host", teamId: "team-ops", userId: null });
    expect(event.request).toStrictEqual({ id: null, clientAddress: null });
  });
});
