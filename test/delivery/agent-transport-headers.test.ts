import { describe, expect, it } from "vitest";
import { createAgentTransport } from "../../src/delivery/agent-transport.js";
import type { AgentHub } from "../../src/services/agent-hub.js";

// Found from outside: an agent that reported `Retry-After` (as the integration spelled it) had it
// ignored, while `retry-after` was honoured: the direct egress gives header names in lower case,
// and the attempt reads them so.
describe("agent transport", () => {
  it("gives an agent's reported header names in lower case, as the direct egress does", async () => {
    const hub = {
      dispatch: async () => ({
        ok: true as const,
        agentId: "agent-1",
        result: { "agent-id": "agent-1", "duration-ms": 3, response: { status: 429, headers: { "Retry-After": "7", "Content-Type": "text/plain" }, body: "slow down", "body-truncated": false } },
      }),
    } as unknown as AgentHub;
    const res = await createAgentTransport(hub).send({ url: "http://10.1.2.3/hook", headers: {}, body: "{}", agentPoolId: "apool-a" });
    expect(res.headers).toStrictEqual({ "retry-after": "7", "content-type": "text/plain" });
  });
});
