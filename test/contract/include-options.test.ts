import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ROUTES } from "../../src/http/routes/all.js";
import { runEventId } from "../../src/domain/run-events.js";
import { routeKey } from "../../src/http/types.js";
import { attachTask, createTask } from "../helpers/run-tasks.js";
import { startContractServer, type ContractServer } from "./harness.js";

/**
 * decision D8: every include value go-tfe's option types name is accepted on every route runplane
 * serves that go-tfe sends them to, read from one list (test/fixtures/go-tfe/includes.json): in
 * the route's own table, and answered 200 when all are sent at once.
 */

interface IncludeOption {
  values: string[];
  routes: string[];
}
const OPTIONS = Object.entries(JSON.parse(readFileSync(new URL("../fixtures/go-tfe/includes.json", import.meta.url), "utf8")) as Record<string, IncludeOption>).filter(
  ([name]) => !name.startsWith("$"),
);

describe("go-tfe's include values on the routes runplane serves", () => {
  it.each(OPTIONS)("%s: each value is in the include table of each of its routes", (_name, option) => {
    for (const key of option.routes) {
      const route = API_ROUTES.find((r) => routeKey(r) === key);
      expect(route, `${key} is served`).toBeDefined();
      const table = route!.query?.include ?? {};
      for (const value of option.values) expect(Object.hasOwn(table, value), `${value} on ${key}`).toBe(true);
    }
  });

  describe("answered, all at once", () => {
    let s: ContractServer;
    const paths: Record<string, string> = {};
    beforeAll(async () => {
      s = await startContractServer({ runs: { policyChecks: (run) => [{ id: `polchk-${run.id}`, status: "passed" }], policyCheckRun: (id) => id.replace(/^polchk-/, "") } });
      const taskId = await createTask(s.app, "scan");
      await attachTask(s.app, taskId, "mandatory", ["post_plan"]);
      const { run, stages } = await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", createdBy: "user-owner" });
      Object.assign(paths, {
        "GET /runs/:run_id": `/runs/${run.id}`,
        "GET /workspaces/:workspace_id/runs": "/workspaces/ws-a/runs",
        "GET /organizations/:organization_name/runs": "/organizations/acme/runs",
        "GET /task-stages/:task_stage_id": `/task-stages/${stages[0]!.id}`,
        "GET /runs/:run_id/run-events": `/runs/${run.id}/run-events`,
        "GET /run-events/:run_event_id": `/run-events/${runEventId(run.id, "created")}`,
        "GET /runs/:run_id/policy-checks": `/runs/${run.id}/policy-checks`,
        "GET /organizations/:organization_name/tasks": "/organizations/acme/tasks",
        "GET /tasks/:task_id": `/tasks/${taskId}`,
        "GET /configuration-versions/:configuration_version_id": "/configuration-versions/cv-1",
      });
    });
    afterAll(() => s.close());

    it.each(OPTIONS)("%s", async (_name, option) => {
      for (const key of option.routes) {
        const res = await s.call("GET", `${paths[key]}?include=${option.values.join(",")}`);
        expect(res.status, `${key}: ${res.text}`).toBe(200);
      }
    });
  });
});
