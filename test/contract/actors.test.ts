import { afterEach, describe, expect, it } from "vitest";
import { listDocument, oneDocument, problems } from "./go-tfe-shapes.js";
import { startContractServer, type ContractServer } from "./harness.js";

/**
 * decision D49: what go-tfe users read as nil before: every run event's `Actor` (the run names its
 * creator; a comment its author), the run's `RunEvents`, and `AgentToken.CreatedBy` for a token a
 * team token made (HCP Terraform's team tokens act as the team's service account user).
 */

describe("go-tfe reads who did what", () => {
  let server: ContractServer | undefined;
  afterEach(async () => server?.close());

  it("RunEvents.List: every event names an actor, the run's creator unless a comment's author", async () => {
    const s = (server = await startContractServer());
    const { run } = await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", createdBy: "user-dev" });
    await s.app.runplane.runTasks.endRun(run.id);
    await s.call("POST", `/runs/${run.id}/comments`, { body: { data: { type: "comments", attributes: { body: "seen" } } } });
    const list = await s.call("GET", `/runs/${run.id}/run-events?include=actor`);
    expect(problems(listDocument("RunEvent", "never"), list.json)).toStrictEqual([]);
    const actors = (list.json.data as any[]).map((e) => `${e.attributes.action}:${e.relationships.actor.data?.id}`);
    expect(actors).toContain("created:user-dev");
    expect(actors).toContain("commented:user-owner");
    for (const event of list.json.data) expect(event.relationships.actor.data, event.attributes.action).toMatchObject({ type: "users" });
    expect((list.json.included as any[]).map((u) => `${u.type}:${u.id}`).sort()).toStrictEqual(["users:user-dev", "users:user-owner"]);
  });

  it("Runs.Read: the run links its run events, the ids RunEvents.List answers", async () => {
    const s = (server = await startContractServer());
    const { run } = await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", createdBy: "user-owner" });
    await s.call("POST", `/runs/${run.id}/comments`, { body: { data: { type: "comments", attributes: { body: "seen" } } } });
    const read = await s.call("GET", `/runs/${run.id}`);
    expect(problems(oneDocument("Run"), read.json)).toStrictEqual([]);
    const events = await s.call("GET", `/runs/${run.id}/run-events`);
    expect(read.json.data.relationships["run-events"].data).toStrictEqual((events.json.data as any[]).map((e) => ({ type: "run-events", id: e.id })));
    expect(read.json.data.relationships["run-events"].links.related).toBe(`/api/v2/runs/${run.id}/run-events`);
  });

  it("AgentTokens.Create and Read: created-by is a user, the team's service account for an owners team token", async () => {
    const s = (server = await startContractServer());
    const { runplane } = s.app;
    await runplane.directory.agentPools.create({ id: "apool-a", name: "pool", organization: "acme" });
    const team = await runplane.directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners" });
    const body = { data: { type: "agent-tokens", attributes: { description: "ci" } } };
    const made = await s.call("POST", "/agent-pools/apool-a/authentication-tokens", { token: team.token, body });
    expect(made.status).toBe(201);
    expect(problems(oneDocument("AgentToken"), made.json)).toStrictEqual([]);
    expect(made.json.data.relationships["created-by"].data).toStrictEqual({ type: "users", id: "api-team_team-owners" });
    const read = await s.call("GET", `/authentication-tokens/${made.json.data.id}`);
    expect(read.json.data.relationships["created-by"].data).toStrictEqual({ type: "users", id: "api-team_team-owners" });
    // A user's token names the user, as before.
    const mine = await s.call("POST", "/agent-pools/apool-a/authentication-tokens", { body });
    expect(mine.json.data.relationships["created-by"].data).toStrictEqual({ type: "users", id: "user-owner" });
  });
});
