import { afterEach, describe, expect, it } from "vitest";
import { deliveriesTo, tasksAnswer } from "../delivery/support.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { agentApp, answered200, protocol, registerRaw, startPoolRun, type AgentApp } from "./support.js";

// Decision D34: the agent protocol's edges: who may call it, what bad input gets, and the rate
// limit (D33) as for any token's requests.

let a: AgentApp | undefined;
let receiver: LoopbackServer | undefined;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  a = undefined;
  receiver = undefined;
});

describe("the agent protocol", () => {
  it("answers 401 without a token, with an API token, and with another token's agent id", async () => {
    a = await agentApp();
    const agentId = await registerRaw(a);
    expect((await protocol(a, "register", {}, "")).status).toBe(401);
    expect((await protocol(a, "register", {}, a.ownerToken)).status).toBe(401);
    const other = (await a.runplane.agentTokens.create("apool-inside", { description: "other", createdBy: { type: "organizations", id: "acme" } })).token;
    expect((await protocol(a, "jobs/next", { "agent-id": agentId, "wait-ms": 0 }, other)).status).toBe(401);
    expect((await protocol(a, "jobs/next", { "agent-id": agentId, "wait-ms": 0 }, a.agentToken)).status).toBe(204);
  });

  // Issue 42 (a surviving mutant): a host that does not hold an agent's session (another host, a
  // restart, 60 s of silence) opens it from the stored record; without comparing the record's token,
  // any valid agent token naming that agent's id took its pool's jobs, access tokens included.
  it("refuses another organization's agent token naming an agent whose session this host does not hold: 401, no job", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    // An agent of the pool verifies the task, then leaves; a job of the pool then waits.
    const helper = a.agent();
    await helper.agentId;
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    await helper.stop();
    const victim = await registerRaw(a, a.agentToken, "victim");
    a.runplane.agentHub.end(victim, "ended"); // as a host that never saw it, or after a restart
    await a.runplane.directory.agentPools.create({ id: "apool-theirs", name: "theirs", organization: "other" });
    const foreign = (await a.runplane.agentTokens.create("apool-theirs", { description: "theirs", createdBy: { type: "organizations", id: "other" } })).token;
    a.dispatcher().start();

    const stolen = await protocol(a, "jobs/next", { "agent-id": victim, "wait-ms": 1_500 }, foreign);
    expect(stolen.status).toBe(401);
    expect(JSON.stringify(stolen.json)).not.toContain("job-");
    expect(deliveriesTo(receiver.requests)).toHaveLength(0);
    expect((await a.storage.taskResults.get(resultId))?.status).toBe("pending");
    // The agent's own token still opens the session from the record, and gets the job.
    expect((await protocol(a, "jobs/next", { "agent-id": victim, "wait-ms": 5_000 }, a.agentToken)).status).toBe(200);
  });

  // Found from outside: a 64 KiB answer of control characters is six times that as JSON, so the
  // report was refused 413, dropped, and the job sent again and again until the deadline.
  it("takes a report whose kept body is all control characters (each six bytes as JSON)", async () => {
    a = await agentApp();
    const agentId = await registerRaw(a);
    const body = "\u0001".repeat(64 * 1024);
    const res = await protocol(a, "jobs/job-unknown/result", { "agent-id": agentId, "duration-ms": 5, response: { status: 200, headers: {}, body, "body-truncated": true } }, a.agentToken);
    expect(JSON.stringify(body).length).toBeGreaterThan(6 * 64 * 1024);
    expect(res.status).toBe(409); // read whole and judged: this job is not the agent's
    // An integration's answer may hold NUL characters: its report is not refused for them.
    const nul = await protocol(a, "jobs/job-unknown/result", { "agent-id": agentId, "duration-ms": 5, response: { status: 200, headers: {}, body: "a\u0000b", "body-truncated": false } }, a.agentToken);
    expect(nul.status).toBe(409);
  });

  // Found from outside: the left-most X-Forwarded-For entry (the client's own) was taken, unchecked.
  // Found from outside (decision D62): with no proxy in front, a forged X-Forwarded-For was taken.
  it("records the connection's own address by default, whatever X-Forwarded-For says", async () => {
    a = await agentApp();
    const res = await fetch(`${a.origin}/api/agent/v1/register`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.agentToken}`, "content-type": "application/json", "x-forwarded-for": "6.6.6.6" },
      body: JSON.stringify({ name: "direct" }),
    });
    const id = ((await res.json()) as { "agent-id": string })["agent-id"];
    expect((await a.storage.agents.get(id))!.ipAddress).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });

  it("records the address the nearest proxy appended, and only an IP address", async () => {
    a = await agentApp({ trustProxy: 1 });
    const register = async (forwarded: string) => {
      const res = await fetch(`${a!.origin}/api/agent/v1/register`, {
        method: "POST",
        headers: { authorization: `Bearer ${a!.agentToken}`, "content-type": "application/json", "x-forwarded-for": forwarded },
        body: JSON.stringify({ name: "fwd" }),
      });
      const id = ((await res.json()) as { "agent-id": string })["agent-id"];
      return (await a!.storage.agents.get(id))!.ipAddress;
    };
    expect(await register("6.6.6.6, 10.9.8.7")).toBe("10.9.8.7");
    expect(await register("<script>alert(1)</script>")).toBe("unknown");
    expect(await register("10.1.1.1, ' OR 1=1 --")).toBe("unknown");
  });

  it("answers 421 and closes the connection for a report of a job another host handed out", async () => {
    a = await agentApp();
    const agentId = await registerRaw(a);
    const res = await fetch(`${a.origin}/api/agent/v1/jobs/job-ZZZZZZZZ0000000000000000/result`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.agentToken}`, "content-type": "application/json" },
      body: JSON.stringify(answered200(agentId)),
    });
    expect(res.status).toBe(421);
    expect(res.headers.get("connection")).toBe("close");
    expect(((await res.json()) as any).errors[0].detail).toMatch(/another host/);
  });

  it("refuses bad input with a JSON:API error and registers nothing", async () => {
    a = await agentApp();
    const bad = await protocol(a, "register", { name: "x".repeat(500), extra: true }, a.agentToken);
    expect(bad.status).toBe(422);
    expect(bad.json.errors.length).toBeGreaterThan(0);
    expect((await a.runplane.directory.agentPools.get("apool-inside")) !== null).toBe(true);
    expect((await a.call("GET", "/api/v2/agent-pools/apool-inside/agents")).json.data).toStrictEqual([]);
    expect((await protocol(a, "jobs/next", { "agent-id": "not an id" }, a.agentToken)).status).toBe(422);
    expect((await protocol(a, "nowhere", {}, a.agentToken)).status).toBe(404);
    const get = await fetch(`${a.origin}/api/agent/v1/register`, { headers: { authorization: `Bearer ${a.agentToken}` } });
    expect(get.status).toBe(405);
  });

  it("counts an agent token's requests in the rate limit (429 with Retry-After past it)", async () => {
    a = await agentApp({ rateLimit: { requestsPerSecond: 1 } });
    const agentId = await registerRaw(a);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await protocol(a, "jobs/next", { "agent-id": agentId, "wait-ms": 0 }, a.agentToken));
    expect(answers.map((r) => r.status)).toContain(429);
  });

  it("gives a proven agent token a bucket of its own, not the one unproven credentials share", async () => {
    a = await agentApp({ rateLimit: { requestsPerSecond: 5, unverifiedPerSecond: 0.5 } });
    const agentId = await registerRaw(a);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await protocol(a, "jobs/next", { "agent-id": agentId, "wait-ms": 0 }, a.agentToken)).status);
    expect(answers).toStrictEqual([204, 204, 204]);
  });
});
