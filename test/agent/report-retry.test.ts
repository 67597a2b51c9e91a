import { describe, expect, it } from "vitest";
import type { AgentClient } from "../../src/agent/client.js";
import { report } from "../../src/agent/run-agent.js";
import type { AgentJob } from "../../src/schemas/agent-protocol.js";

// Found by a newcomer: an agent stopped while its last report waited for the next job sent the
// report again (without asking), got 409 because the first one had been taken, and warned that the
// host no longer held the job, though the job had passed on its one attempt.
describe("an agent's report sent again", () => {
  const job = { id: "job-1", "lease-deadline": new Date(Date.now() + 60_000).toISOString() } as unknown as AgentJob;

  it("takes a 409 after a try that may have landed as already reported, without a warning", async () => {
    const stopping = new AbortController();
    const calls: unknown[] = [];
    const client: AgentClient = {
      async call(_path, body, signal) {
        calls.push(body);
        if (calls.length === 1) {
          // The host took this report; the request then waits for the next job until the stop cuts it.
          stopping.abort();
          if (signal?.aborted) throw new Error("aborted");
        }
        return { status: 409, json: null };
      },
    };
    const lines: string[] = [];
    const answer = await report(client, "agent-1", job, { status: 200 }, { "next-wait-ms": 25_000 }, stopping.signal, (line) => lines.push(line));
    expect(calls).toHaveLength(2);
    expect(answer).toBeNull();
    expect(lines).toStrictEqual([]);
  });

  it("still warns when the first report itself is refused as late", async () => {
    const client: AgentClient = { call: async () => ({ status: 409, json: null }) };
    const lines: string[] = [];
    await report(client, "agent-1", job, { status: 200 }, {}, new AbortController().signal, (line) => lines.push(line));
    expect(lines).toStrictEqual(["job job-1: the host no longer holds it (its lease ran out); the report was not taken"]);
  });

  // Found by an operator: behind a round-robin load balancer a report reached the host that had not
  // handed the job out, was refused as late, and the job was sent again and again.
  it("sends a report again when another host answers 421, until the one that holds the job takes it", async () => {
    let calls = 0;
    const client: AgentClient = { call: async () => (++calls < 3 ? { status: 421, json: null } : { status: 204, json: null }) };
    const lines: string[] = [];
    const answer = await report(client, "agent-1", job, { status: 200 }, {}, new AbortController().signal, (line) => lines.push(line));
    expect(calls).toBe(3);
    expect(answer).toStrictEqual({ status: 204, json: null });
    expect(lines).toStrictEqual([]);
  });
});
