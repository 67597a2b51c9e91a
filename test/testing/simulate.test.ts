import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createExampleIntegration } from "../../examples/integration/server.js";
import { listen } from "../../examples/server/integration.js";
import { verifyRunTaskSignature, signatureFromHeaders } from "../../src/integration/signature.js";
import { formatReport, simulateRunTask, type SimulationReport } from "../../src/testing/simulate/index.js";
import { startPlatform } from "../../src/testing/simulate/platform.js";

const KEY = "simulator-test-key";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

interface Behaviour {
  checkSignature?: boolean;
  answer?: number;
  contentType?: string;
  callback?: boolean;
  statuses?: string[];
  outcomes?: number;
  /** Download configuration_version_download_url first, with or without the access token; statuses land in `fetched`. */
  configuration?: { withToken: boolean; fetched: number[] };
}

/** A hand-written integration whose one defect is chosen by `behaviour`. */
async function brokenIntegration(behaviour: Behaviour): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const signature = signatureFromHeaders(req.headers as Record<string, string>);
      if ((behaviour.checkSignature ?? true) && !verifyRunTaskSignature(raw, signature, KEY)) return void res.writeHead(401).end();
      res.writeHead(behaviour.answer ?? 200).end();
      const request = JSON.parse(raw.toString("utf8")) as { access_token: string; task_result_callback_url: string };
      if (request.access_token === "test-token" || behaviour.callback === false) return;
      void (async () => {
        const config = behaviour.configuration;
        if (config) {
          const url = (request as unknown as { configuration_version_download_url: string }).configuration_version_download_url;
          const res = await fetch(url, config.withToken ? { headers: { authorization: `Bearer ${request.access_token}` } } : {});
          await res.arrayBuffer();
          config.fetched.push(res.status);
        }
        for (const status of behaviour.statuses ?? ["running", "passed"]) {
          await fetch(request.task_result_callback_url, {
            method: "PATCH",
            headers: { authorization: `Bearer ${request.access_token}`, "content-type": behaviour.contentType ?? "application/vnd.api+json" },
            body: JSON.stringify({ data: { type: "task-results", attributes: { status }, ...outcomes(behaviour.outcomes ?? 0) } }),
          });
        }
        // Callbacks for the wrong-key request may land after the simulator stopped its platform.
      })().catch(() => {});
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => { server.close(() => r()); server.closeAllConnections(); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** An integration that answers every request (verified or not) with `answer(raw body, headers)` as text/plain. */
async function answering(answer: (raw: string, headers: Record<string, string>) => { status: number; body: string }): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const { status, body } = answer(Buffer.concat(chunks).toString("utf8"), req.headers as Record<string, string>);
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => { server.close(() => r()); server.closeAllConnections(); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const outcomes = (count: number) =>
  count === 0
    ? {}
    : { relationships: { outcomes: { data: Array.from({ length: count }, (_, i) => ({ type: "task-result-outcomes", attributes: { "outcome-id": `O-${i}`, description: "finding" } })) } } };

const failures = (report: SimulationReport) => report.checks.filter((c) => c.level === "fail").map((c) => `[${c.scope}] ${c.name}: ${c.detail}`);

describe("simulateRunTask", () => {
  it("passes the bundled example integration at every stage, in both dialects", async () => {
    const { handler } = createExampleIntegration({ hmacKey: KEY });
    const started = await listen(handler, 0, "127.0.0.1");
    closers.push(started.close);
    for (const dialect of ["default", "hcp-terraform"] as const) {
      const report = await simulateRunTask({ url: `http://127.0.0.1:${started.port}/`, hmacKey: KEY, dialect, stages: ["pre_plan", "post_plan"] });
      expect(failures(report)).toEqual([]);
      expect(report.ok).toBe(true);
      const planFetched = report.checks.find((c) => c.scope === "post_plan" && c.name === "plan fetched");
      expect(planFetched?.level).toBe("pass");
      // The deterministic plan deletes a resource, so the example fails the run.
      expect(report.checks.find((c) => c.scope === "post_plan" && c.name === "status order")?.detail).toBe("final status failed");
      expect(formatReport(report)).toContain("integration passes the run task contract");
    }
  });

  it("offers the run read side to an integration that summarises the run, in both dialects", async () => {
    const { handler } = createExampleIntegration({ hmacKey: KEY, summary: { apiToken: "an-api-token" } });
    const started = await listen(handler, 0, "127.0.0.1");
    closers.push(started.close);
    for (const dialect of ["default", "hcp-terraform"] as const) {
      const report = await simulateRunTask({ url: `http://127.0.0.1:${started.port}/`, hmacKey: KEY, dialect });
      expect(failures(report)).toEqual([]);
      const read = report.checks.find((c) => c.scope === "post_plan" && c.name === "run read");
      expect(read?.level).toBe("pass");
      for (const route of ["GET /runs/:id", "GET /runs/:id/plan", "GET /runs/:id/apply", "GET /runs/:id/policy-checks", "GET /runs/:id/comments", "GET /runs/:id/run-events", "GET /plans/:id/log", "POST /runs/:id/comments"]) {
        expect(read?.detail.split(", "), route).toContain(route);
      }
    }
  });

  it("answers a run read without a bearer token 401 and records every read of the run", async () => {
    const platform = await startPlatform({}, "hcp-terraform");
    closers.push(platform.close);
    expect((await fetch(`${platform.origin}/api/v2/runs/run-abc/`)).status).toBe(401);
    const ok = await fetch(`${platform.origin}/api/v2/runs/run-abc/`, { headers: { authorization: "Bearer t" } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).data).toMatchObject({ id: "run-abc", type: "runs", attributes: { status: "post_plan_running" } });
    expect(platform.traffic("abc").runReads).toStrictEqual([{ route: "GET /runs/:id", status: 401 }, { route: "GET /runs/:id", status: 200 }]);
  });

  it("serves a run event and a policy check by id, as listed, and 404 for ids of nothing", async () => {
    const platform = await startPlatform({}, "hcp-terraform");
    closers.push(platform.close);
    const get = async (path: string) => {
      const res = await fetch(`${platform.origin}/api/v2${path}`, { headers: { authorization: "Bearer t" } });
      return { status: res.status, json: (await res.json()) as any };
    };
    const [event] = (await get("/runs/run-abc/run-events")).json.data;
    expect(await get(`/run-events/${event.id}`)).toStrictEqual({ status: 200, json: { data: event } });
    const [check] = (await get("/runs/run-abc/policy-checks")).json.data;
    expect(check).toMatchObject({ id: "polchk-abc", type: "policy-checks", relationships: { run: { data: { type: "runs", id: "run-abc" } } } });
    expect(await get("/policy-checks/polchk-abc")).toStrictEqual({ status: 200, json: { data: check } });
    expect((await get("/runs/run-abc")).json.data.relationships["policy-checks"].data).toStrictEqual([{ type: "policy-checks", id: "polchk-abc" }]);
    expect((await get(`/run-events/${event.id.slice(0, -1)}x`)).status).toBe(404);
    expect((await fetch(`${platform.origin}/api/v2/run-events/re-nothing`, { headers: { authorization: "Bearer t" } })).status).toBe(404);
    expect(platform.traffic("abc").runReads.map((r) => `${r.route} ${r.status}`)).toStrictEqual([
      "GET /runs/:id/run-events 200",
      "GET /run-events/:id 200",
      "GET /runs/:id/policy-checks 200",
      "GET /policy-checks/:id 200",
      "GET /runs/:id 200",
      "GET /run-events/:id 404",
    ]);
  });

  it("serves the configuration download to the access token only, and reports whether it was fetched with it", async () => {
    const withToken = { withToken: true, fetched: [] as number[] };
    const good = await simulateRunTask({ url: await brokenIntegration({ configuration: withToken }), hmacKey: KEY, callbackTimeoutMs: 2000 });
    expect(withToken.fetched).toEqual([200]);
    expect(good.checks.find((c) => c.name === "configuration fetched")).toMatchObject({ level: "pass", detail: "with the access token" });

    const without = { withToken: false, fetched: [] as number[] };
    const bad = await simulateRunTask({ url: await brokenIntegration({ configuration: without }), hmacKey: KEY, callbackTimeoutMs: 2000 });
    expect(without.fetched).toEqual([401]);
    expect(bad.checks.find((c) => c.name === "configuration fetched")?.level).toBe("warn");

    const none = await simulateRunTask({ url: await brokenIntegration({}), hmacKey: KEY, callbackTimeoutMs: 2000 });
    expect(none.checks.find((c) => c.name === "configuration fetched")?.detail).toMatch(/^not downloaded \(optional/);
  });

  it("reports an integration that accepts any signature", async () => {
    const report = await simulateRunTask({ url: await brokenIntegration({ checkSignature: false }), hmacKey: KEY, callbackTimeoutMs: 2000 });
    expect(report.ok).toBe(false);
    expect(failures(report)).toEqual(["[signature] wrong key refused: a request signed with a wrong key was answered 200; it must be refused (4xx)"]);
  });

  it("reports an integration that answers 201", async () => {
    const report = await simulateRunTask({ url: await brokenIntegration({ answer: 201 }), hmacKey: KEY, callbackTimeoutMs: 2000 });
    expect(failures(report)).toEqual(["[verification] answer: answered 201; expected 200", "[post_plan] answer: answered 201; expected 200"]);
  });

  // Decision D31: the integration's own words for every answer that is not 200.
  it("prints what an integration answering 404 said, on one line", async () => {
    const url = await answering(() => ({ status: 404, body: 'Bad Request: unsupported plan format version:\n  expected "0.1", got "1.2"' }));
    const report = await simulateRunTask({ url, hmacKey: KEY, callbackTimeoutMs: 300 });
    const words = 'answered 404: Bad Request: unsupported plan format version: expected "0.1", got "1.2"; expected 200';
    expect(failures(report)).toEqual([`[verification] answer: ${words}`, `[post_plan] answer: ${words}`]);
    expect(report.checks.find((c) => c.name === "wrong key refused")?.detail).toBe('answered 404: Bad Request: unsupported plan format version: expected "0.1", got "1.2"');
    expect(formatReport(report)).toContain(`FAIL  [post_plan] answer: ${words}`);
  });

  it("shows [redacted] where an integration echoing the request repeats the HMAC key, the access token or the signature", async () => {
    let echoed = "";
    const url = await answering((raw, headers) => {
      echoed = `key ${KEY} signed ${headers["x-svc-task-signature"]} ${raw}`;
      return { status: 400, body: echoed };
    });
    const report = await simulateRunTask({ url, hmacKey: KEY, callbackTimeoutMs: 300 });
    const text = formatReport(report);
    const answer = report.checks.find((c) => c.scope === "post_plan" && c.name === "answer")!.detail;
    expect(answer).toMatch(/^answered 400: key \[redacted\] signed \[redacted\] \{.*"access_token":"\[redacted\]"/);
    const token = /"access_token":"([^"]+)"/.exec(echoed)![1]!;
    for (const secret of [KEY, token, /signed (\S+)/.exec(echoed)![1]!]) expect(text).not.toContain(secret);
  });

  it("reports a callback with the wrong content type", async () => {
    const report = await simulateRunTask({ url: await brokenIntegration({ contentType: "application/json" }), hmacKey: KEY, callbackTimeoutMs: 2000 });
    expect(failures(report)).toEqual(["[post_plan] content type: callback content type is application/json; expected application/vnd.api+json"]);
  });

  it("reports an integration that never calls back", async () => {
    const report = await simulateRunTask({ url: await brokenIntegration({ callback: false }), hmacKey: KEY, callbackTimeoutMs: 300 });
    expect(failures(report)).toEqual(["[post_plan] callback: no callback within 300 ms"]);
  });

  it("reports a status other than running, passed or failed", async () => {
    const report = await simulateRunTask({ url: await brokenIntegration({ statuses: ["running", "errored"] }), hmacKey: KEY, callbackTimeoutMs: 300 });
    const lines = failures(report);
    expect(lines).toContain('[post_plan] status values: callback status "errored" is not one of running, passed, failed');
    expect(report.ok).toBe(false);
  });

  it("reports callbacks sent after the final status", async () => {
    const report = await simulateRunTask({ url: await brokenIntegration({ statuses: ["passed", "running"] }), hmacKey: KEY, callbackTimeoutMs: 2000 });
    expect(failures(report)).toEqual(["[post_plan] status order: callbacks after the final status passed: running"]);
  });

  it("reports a callback over the outcome limit", async () => {
    const report = await simulateRunTask({ url: await brokenIntegration({ statuses: ["passed"], outcomes: 251 }), hmacKey: KEY, callbackTimeoutMs: 2000 });
    expect(failures(report)).toEqual(["[post_plan] callback body: data.relationships.outcomes.data: Too big: expected array to have <=250 items"]);
  });
});
