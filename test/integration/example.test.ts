import { describe, expect, it, vi } from "vitest";
import { verificationRequest } from "../../src/domain/run-task-request.js";
import { CallbackSchema } from "../../src/schemas/run-tasks.js";
import { createExampleIntegration } from "../../examples/integration/server.js";
import { HMAC_KEY, recordingFetch, requestInput, runTaskRequest, signedPost } from "./fixtures.js";

/** The example integration, a signed request for it, and the callbacks it sent, read with runplane's schema. */
async function run(message: string) {
  const { fetch, calls } = recordingFetch();
  const errors: unknown[] = [];
  const { handler } = createExampleIntegration({ hmacKey: HMAC_KEY, fetch, onError: (error) => errors.push(error) });
  const payload = runTaskRequest({ run: { ...requestInput().run, message } });
  const response = await handler(signedPost(payload));
  await vi.waitFor(() => expect(calls.length + errors.length).toBeGreaterThanOrEqual(2));
  return { response, payload, calls, errors, callbacks: calls.map((call) => CallbackSchema.parse(call.json)) };
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

  it("answers the verification request and a badly signed one without calling back", async () => {
    const { fetch, calls } = recordingFetch();
    const { handler } = createExampleIntegration({ hmacKey: HMAC_KEY, fetch });
    const verification = verificationRequest({ organizationName: "acme", urls: requestInput().urls, at: new Date(0) });
    expect((await handler(signedPost(verification))).status).toBe(200);
    expect((await handler(signedPost(runTaskRequest(), { key: "wrong" }))).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toEqual([]);
  });
});
