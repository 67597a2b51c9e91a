import { describe, expect, it } from "vitest";
import { AgentCallError, createAgentClient } from "../../src/agent/client.js";

// Found by an operator: in a silent partition the agent waited on the HTTP client's five-minute
// default, and a run started after the network came back was delivered four minutes late.
describe("the agent's calls", () => {
  it("fail with a TIMEOUT AgentCallError when no answer comes within the wait asked for plus the bound", async () => {
    const silent: typeof fetch = (_url, init) =>
      new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    const client = createAgentClient({ url: "http://runplane.invalid", token: "t", fetch: silent, requestTimeoutMs: 100 });
    const started = Date.now();
    const error = await client.call("jobs/next", { "agent-id": "agent-1", "wait-ms": 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentCallError);
    expect((error as AgentCallError).code).toBe("TIMEOUT");
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
