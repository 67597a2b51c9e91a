import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleIntegration } from "../../examples/integration/server.js";
import { listen } from "../../examples/server/integration.js";
import { run } from "./helpers.js";

describe("runplane check-integration", () => {
  let url = "";
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const started = await listen(createExampleIntegration({ hmacKey: "cli-key" }).handler, 0, "127.0.0.1");
    url = `http://127.0.0.1:${started.port}/`;
    close = started.close;
  });
  afterAll(() => close());

  it("prints a passing report and exits 0 for the example integration", async () => {
    const result = await run(["check-integration", url, "--hmac-key", "cli-key", "--stage", "post_plan", "--dialect", "hcp-terraform"]);
    expect(result.stdout).toContain("ok    [signature] wrong key refused");
    expect(result.stdout).toContain("integration passes the run task contract");
    expect(result.code).toBe(0);
  }, 30_000);

  it("exits 1 and names the failure when the key does not match", async () => {
    const result = await run(["check-integration", url, "--hmac-key", "not-the-key"]);
    expect(result.stdout).toContain('FAIL  [verification] answer: answered 401: {"errors":[{"status":"401","title":"unauthorized","detail":"run task signature does not verify"}]}; expected 200');
    expect(result.code).toBe(1);
  }, 30_000);

  // Decision D31: what the integration said, for every answer that is not 200, secrets redacted.
  it("prints what an integration answering 404 said, and [redacted] where it echoes the HMAC key", async () => {
    const said = 'unsupported plan format version: expected "0.1", got "1.2"';
    const refusing = await listen(async () => new Response(said, { status: 404, headers: { "content-type": "text/plain" } }), 0, "127.0.0.1");
    try {
      const result = await run(["check-integration", `http://127.0.0.1:${refusing.port}/`, "--hmac-key", "cli-key-0123456789"]);
      expect(result.stdout).toContain(`FAIL  [post_plan] answer: answered 404: ${said}; expected 200`);
      expect(result.code).toBe(1);
    } finally {
      await refusing.close();
    }
    const echoing = await listen(async (request) => new Response(`bad signature ${request.headers.get("x-svc-task-signature")} for ${await request.text()}`, { status: 401 }), 0, "127.0.0.1");
    try {
      const result = await run(["check-integration", `http://127.0.0.1:${echoing.port}/`, "--hmac-key", "cli-key-0123456789"]);
      expect(result.stdout).toMatch(/FAIL {2}\[post_plan\] answer: answered 401: bad signature \[redacted\] for \{.*"access_token":"\[redacted\]"/);
      expect(result.stdout).not.toContain("cli-key-0123456789");
    } finally {
      await echoing.close();
    }
  }, 60_000);

  it("exits 1 with one line when --hmac-key is missing", async () => {
    const result = await run(["check-integration", url]);
    expect(result.stderr).toBe("runplane check-integration: --hmac-key is required: the key the integration verifies signatures with\n");
    expect(result.code).toBe(1);
  }, 30_000);
});
