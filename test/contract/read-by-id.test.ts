import { afterEach, describe, expect, it } from "vitest";
import { listDocument, oneDocument, problems } from "./go-tfe-shapes.js";
import { startContractServer, type ContractServer } from "./harness.js";

/**
 * Decision D36: go-tfe's `RunEvents.Read` / `ReadWithOptions` (GET /run-events/:id,
 * RunEventIncludeOpt `actor`, `comment`) and `PolicyChecks.Read` (GET /policy-checks/:id) over
 * HTTP, each decoded as go-tfe decodes it and equal to the item its list wrote. Depends on the
 * read-by-id routes of item 2 (decision D36).
 */

describe("go-tfe reads a run event and a policy check by id", () => {
  let server: ContractServer | undefined;
  afterEach(async () => server?.close());

  async function started() {
    let runId = "";
    const s = (server = await startContractServer({
      runs: {
        policyChecks: () => [{ id: "polchk-1", status: "passed", scope: "organization" }, { id: "polchk-2", status: "soft_failed" }],
        policyCheckRun: (id: string) => (id.startsWith("polchk-") ? runId : null),
      },
    }));
    const { run } = await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go", createdBy: "user-owner" });
    runId = run.id;
    await s.call("POST", `/runs/${run.id}/comments`, { body: { data: { type: "comments", attributes: { body: "seen" } } } });
    return { s, run };
  }

  it("RunEvents.Read: every event of the list reads by id, with include=actor,comment", async () => {
    const { s, run } = await started();
    const list = await s.call("GET", `/runs/${run.id}/run-events`);
    expect(problems(listDocument("RunEvent", "never"), list.json)).toStrictEqual([]);
    expect(list.json.data.length).toBeGreaterThanOrEqual(2);
    for (const event of list.json.data) {
      const one = await s.call("GET", `/run-events/${event.id}`);
      expect(one.status, event.id).toBe(200);
      expect(problems(oneDocument("RunEvent"), one.json)).toStrictEqual([]);
      expect(one.json.data).toStrictEqual(event);
    }
    const commented = list.json.data.find((e: any) => e.relationships.comment.data !== null);
    const withIncludes = await s.call("GET", `/run-events/${commented.id}?include=actor,comment`);
    expect(problems(oneDocument("RunEvent"), withIncludes.json)).toStrictEqual([]);
    expect(withIncludes.json.included.map((r: any) => r.type).sort()).toStrictEqual(["comments", "users"]);
    expect((await s.call("GET", "/run-events/re-missing")).status).toBe(404);
  });

  it("PolicyChecks.Read: every check of the list reads by id, with include=run", async () => {
    const { s, run } = await started();
    const list = await s.call("GET", `/runs/${run.id}/policy-checks`);
    expect(problems(listDocument("PolicyCheck"), list.json)).toStrictEqual([]);
    for (const check of list.json.data) {
      const one = await s.call("GET", `/policy-checks/${check.id}`);
      expect(one.status, check.id).toBe(200);
      expect(problems(oneDocument("PolicyCheck"), one.json)).toStrictEqual([]);
      expect(one.json.data).toStrictEqual(check);
    }
    const withRun = await s.call("GET", `/policy-checks/polchk-1?include=run,run.workspace`);
    expect(problems(oneDocument("PolicyCheck"), withRun.json)).toStrictEqual([]);
    expect(withRun.json.included.map((r: any) => `${r.type}:${r.id}`)).toStrictEqual([`runs:${run.id}`, "workspaces:ws-a"]);
    expect((await s.call("GET", "/policy-checks/other-1")).status).toBe(404);
  });
});
