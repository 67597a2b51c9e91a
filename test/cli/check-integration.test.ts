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
    expect(result.stdout).toContain("FAIL  [verification] answer: answered 401; expected 200");
    expect(result.code).toBe(1);
  }, 30_000);

  it("exits 1 with one line when --hmac-key is missing", async () => {
    const result = await run(["check-integration", url]);
    expect(result.stderr).toBe("runplane check-integration: --hmac-key is required: the key the integration verifies signatures with\n");
    expect(result.code).toBe(1);
  }, 30_000);
});
