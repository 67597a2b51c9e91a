import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher, createResultsPage, type HttpRequest, type HttpResponse, type HttpTransport } from "../../src/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { attachTask, createTask } from "../helpers/run-tasks.js";
import { manualClock, MINUTE, type ManualClock } from "../delivery/support.js";

// decision D31 with D16: the attempt during which the deadline passes is the last one. Its answer
// closes the row instead of scheduling a retry, and that closing attempt is recorded like any
// other: the attempt history and the results page list it.

const text = (body: HttpRequest["body"]): string => (typeof body === "string" ? body : new TextDecoder().decode(body));

/** Answers verification requests 200 and run task requests 503; `during(n)` runs while the n-th run task request is in flight. */
function unavailable(during: (n: number) => void): HttpTransport {
  let n = 0;
  return {
    async send(req): Promise<HttpResponse> {
      if ((JSON.parse(text(req.body)) as { access_token?: string }).access_token === "test-token") return { status: 200, headers: {}, body: "", bodyTruncated: false };
      during(++n);
      return { status: 503, headers: { "content-type": "text/plain" }, body: "maintenance", bodyTruncated: false };
    },
    async close() {},
  };
}

let app: TestApp | undefined;
afterEach(async () => {
  await app?.runplane.close();
  app = undefined;
});

describe("the attempt during which the deadline passes (D16, D31)", () => {
  it("is recorded: the attempt history and the results page list the closing attempt", async () => {
    const clock: ManualClock = manualClock();
    let deadline = Number.NaN;
    // The second request is still waiting for its answer when the deadline comes.
    const transport = unavailable((n) => {
      if (n === 2) clock.set(deadline);
    });
    app = await createTestApp({ clock, transport, publicUrl: "https://runplane.example" });
    await attachTask(app, await createTask(app, "scanner"), "mandatory");
    const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await app.runplane.runTasks.startStage(run.id, "post_plan");
    const resultId = (await app.runplane.runTasks.listResults(stages[0]!.id))[0]!.id;
    const dispatcher = createDispatcher(app.runplane, { random: () => 0, owner: "test" });

    // Attempt 1 opens the window and is answered 503: retried.
    expect(await dispatcher.tick()).toMatchObject({ attempted: 1, failed: 1 });
    deadline = Date.parse((await app.storage.taskResults.get(resultId))!.deadlineAt!);
    expect((await app.storage.taskDeliveries.listByResult(resultId))[0]).toMatchObject({ attempt: 1, closedAt: null });

    // Attempt 2 starts before the deadline and is answered at it: no retry is left, the row closes.
    clock.advance(MINUTE);
    expect(await dispatcher.tick()).toMatchObject({ attempted: 1, failed: 1, expired: 1 });
    expect((await app.storage.taskDeliveries.listByResult(resultId))[0]).toMatchObject({ attempt: 2, lastError: "responded with 503: maintenance" });
    expect((await app.storage.taskDeliveries.listByResult(resultId))[0]!.closedAt).not.toBeNull();
    expect((await app.storage.taskResults.get(resultId))!.status).toBe("unreachable");

    const history = await app.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 });
    expect(history.total).toBe(2);
    expect(history.items.map((x) => [x.number, x.outcome, x.status, x.excerpt])).toStrictEqual([
      [2, "answered", 503, "maintenance"],
      [1, "answered", 503, "maintenance"],
    ]);
    expect(history.items[0]!.startedAt).toBe(new Date(deadline - 10 * MINUTE + MINUTE).toISOString());

    const page = createResultsPage(app.runplane, { prefix: "/app" });
    const response = await page(new Request(`http://localhost/app/runs/${run.id}`, { headers: { authorization: `Bearer ${app.ownerToken}` } }));
    const html = await response.text();
    expect(response.status).toBe(200);
    const details = /<details class="attempts">[\s\S]*?<\/details>/.exec(html)?.[0] ?? "";
    expect([...details.matchAll(/<tr data-outcome="answered">\n<td>(\d+)<\/td>/g)].map((m) => Number(m[1]))).toStrictEqual([2, 1]);
    expect(html).toMatch(/Unreachable: the integration never accepted the request \(an answer of 200\) before the deadline, 2 attempts made, /);
  });
});
