import { describe, expect, it } from "vitest";
import { externalIntegration, startIntegration } from "../../examples/server/integration.js";
import { createEgressPolicy } from "../../src/delivery/address-policy.js";

// The reference server's egress allowlist names its integration's address AND port.
describe("reference server: the integration's allowlist entry", () => {
  it("is the bundled integration's loopback address and the port it actually bound", async () => {
    const integration = await startIntegration({ hmacKey: "k".repeat(32), port: 0 });
    try {
      const port = Number(new URL(integration.url).port);
      expect(port).toBeGreaterThan(0);
      expect(integration.allow).toBe(`127.0.0.1:${port}`);
      const policy = createEgressPolicy({ allow: [integration.allow] });
      expect(policy.checkUrl(integration.url)).toMatchObject({ ok: true });
      expect(policy.checkUrl(`http://127.0.0.1:${port === 65535 ? 1 : port + 1}/`)).toMatchObject({ ok: false });
    } finally {
      await integration.close();
    }
  });

  it.each([
    ["http://10.0.0.5:9000/run-task", "10.0.0.5:9000"],
    ["http://10.0.0.5/run-task", "10.0.0.5:80"],
    ["https://[fd00::5]/run-task", "[fd00::5]:443"],
    ["http://[fd00::5]:8443/run-task", "[fd00::5]:8443"],
    ["https://Tasks.Internal/run-task", "tasks.internal:443"],
    ["http://tasks.internal:8081/run-task", "tasks.internal:8081"],
  ])("takes host and port from INTEGRATION_URL %s", (url, allow) => {
    const integration = externalIntegration(url);
    expect(integration.allow).toBe(allow);
    expect(() => createEgressPolicy({ allow: [integration.allow] })).not.toThrow();
  });
});
