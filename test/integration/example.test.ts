import { describe, expect, it } from "vitest";
import { verificationRequest } from "../../src/domain/run-task-request.js";
import { CallbackSchema } from "../../src/schemas/run-tasks.js";
import { createExampleIntegration } from "../../examples/integration/server.js";
import { HMAC_KEY, recordingFetch, requestInput, runTaskRequest, signedPost } from "./fixtures.js";

/** A plan in `terraform show -json` shape with one change per `[address, actions]`. */
const planWith = (...changes: [string, string[]][]) => ({
  format_version: "1.2",
  resource_changes: changes.map(([address, actions]) => ({ address, change: { actions } })),
});

/**
 * The example integration, a signed request for it, its plan download (answered with `plan`) and
 * the callbacks it sent, read with runplane's schema.
 */
async function run(message: string, plan: unknown = planWith(["null_resource.a", ["create"]]), stage: "post_plan" | "pre_plan" = "post_plan") {
  const errors: unknown[] = [];
  // Its work is over at its second callback (or an error): resolved as it happens, not polled.
  let over = (): void => undefined;
  const done = new Promise<void>((resolve) => (over = resolve));
  const patches = () => calls.filter((call) => call.method === "PATCH");
  const check = (): void => void (patches().length + errors.length >= 2 && over());
  const { fetch, calls } = recordingFetch((call) => {
    check();
    return call.method === "GET" ? new Response(typeof plan === "string" ? plan : JSON.stringify(plan), { status: plan === 404 ? 404 : 200 }) : new Response(null, { status: 200 });
  });
  const { handler } = createExampleIntegration({ hmacKey: HMAC_KEY, fetch, onError: (error) => (errors.push(error), check()) });
  const payload = runTaskRequest({ stage, run: { ...requestInput().run, message } });
  const response = await handler(signedPost(payload));
  await done;
  const downloads = calls.filter((call) => call.method === "GET");
  return { response, payload, calls: patches(), downloads, errors, callbacks: patches().map((call) => CallbackSchema.parse(call.json)) };
}

describe("example integration", () => {
  it("reports running with one tagged Markdown outcome, then passed", async () => {
    const { response, payload, calls, errors, callbacks } = await run("Triggered via API");
    expect(response.status).toBe(200);
    expect(errors).toEqual([]);
    expect(calls.map((call) => [call.method, call.url, call.headers.get("authorization")])).toEqual([
      ["PATCH", payload.task_result_callback_url, `Bearer ${payload.access_token}`],
      ["PATCH", payload.task_result_callback_url, `Bearer ${payload.access_token}`],
    ]);
    const [running, passed] = callbacks;
    expect(running).toMatchObject({ status: "running", outcomes: [{ outcomeId: "EXAMPLE-001" }] });
    expect(running!.outcomes[0]!.body).toContain("| Workspace | `networking` |");
    expect(running!.outcomes[0]!.tags).toEqual({
      Severity: [{ label: "Info", level: "info" }],
      Status: [{ label: "Inspected", level: "none" }],
    });
    expect(passed).toEqual({ status: "passed", message: "Nothing to report", url: undefined, outcomes: [] });
  });

  it("fails a run whose message contains \"fail\" with an error-level Severity outcome", async () => {
    const { errors, callbacks } = await run("please FAIL this run");
    expect(errors).toEqual([]);
    expect(callbacks.map((callback) => callback.status)).toEqual(["running", "failed"]);
    const [outcome] = callbacks[1]!.outcomes;
    expect(outcome).toMatchObject({
      outcomeId: "EXAMPLE-002",
      body: expect.stringContaining("## Failure requested"),
      tags: { Severity: [{ label: "High", level: "error" }], Status: [{ label: "Failed", level: "error" }] },
    });
  });

  it("downloads the plan with the access token and fails with one error outcome per deleted resource", async () => {
    const plan = planWith(["null_resource.keep", ["no-op"]], ["null_resource.old", ["delete"]], ["aws_db.main", ["delete", "create"]]);
    const { payload, downloads, errors, callbacks } = await run("Triggered via API", plan);
    expect(errors).toEqual([]);
    expect(downloads.map((call) => [call.url, call.headers.get("authorization")])).toEqual([
      [payload.plan_json_api_url, `Bearer ${payload.access_token}`],
    ]);
    expect(callbacks[0]!.outcomes[0]!.body).toContain("| Plan | 3 resource changes |");
    const failed = callbacks[1]!;
    expect(failed).toMatchObject({ status: "failed", message: "The plan deletes 2 resources" });
    expect(failed.outcomes.map((o) => o.outcomeId)).toEqual(["DELETE-null_resource.old", "DELETE-aws_db.main"]);
    expect(failed.outcomes[0]!.tags.Severity).toEqual([{ label: "High", level: "error" }]);
  });

  it("still fails a run whose message contains \"fail\" when its plan deletes nothing", async () => {
    const { callbacks } = await run("fail please", planWith(["null_resource.a", ["update"]]));
    expect(callbacks[1]).toMatchObject({ status: "failed", outcomes: [{ outcomeId: "EXAMPLE-002" }] });
  });

  it("fails closed on a plan it cannot download or read", async () => {
    for (const [plan, reason] of [[404, "download answered 404"], ["not json", "plan is not JSON"], [{ resource_changes: [] }, "no format_version"]] as const) {
      const { callbacks } = await run("Triggered via API", plan);
      expect(callbacks[1]!.status).toBe("failed");
      expect(callbacks[1]!.message).toContain(reason);
    }
  });

  it("reads no plan at pre_plan, where the request has no plan URL", async () => {
    const { downloads, callbacks } = await run("Triggered via API", planWith(["x.y", ["delete"]]), "pre_plan");
    expect(downloads).toEqual([]);
    expect(callbacks.map((c) => c.status)).toEqual(["running", "passed"]);
  });

  it("answers the verification request and a badly signed one without calling back", async () => {
    let over = (): void => undefined;
    const done = new Promise<void>((resolve) => (over = resolve));
    const { fetch, calls } = recordingFetch(() => {
      if (calls.filter((call) => call.method === "PATCH").length === 2) over();
      return new Response(null, { status: 200 });
    });
    const { handler } = createExampleIntegration({ hmacKey: HMAC_KEY, fetch });
    const verification = verificationRequest({ organizationName: "acme", urls: requestInput().urls, at: new Date(0) });
    expect((await handler(signedPost(verification))).status).toBe(200);
    expect((await handler(signedPost(runTaskRequest(), { key: "wrong" }))).status).toBe(401);
    // A request it accepts afterwards starts after anything the first two could have started:
    // once its work is over, every call made so far is one of its own.
    const accepted = runTaskRequest({ accessToken: "at-accepted-after", stage: "pre_plan" });
    expect((await handler(signedPost(accepted))).status).toBe(200);
    await done;
    expect(calls.map((call) => [call.method, call.headers.get("authorization")])).toEqual([
      ["PATCH", "Bearer at-accepted-after"],
      ["PATCH", "Bearer at-accepted-after"],
    ]);
  });
});
