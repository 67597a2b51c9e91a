import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher, createResultsPage } from "../../src/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { answeringRunTasks, attachTask, createTask } from "../helpers/run-tasks.js";
import { manualClock, MINUTE, type ManualClock } from "../delivery/support.js";

// decision D31: "an attempt is under way" means a dispatcher holds the row's lease now. A host that
// claimed the row and then crashed holds it only until the lease runs out: from that instant the
// delivery status, and the results page that words it, stop saying an attempt is under way.

const unavailable = answeringRunTasks(503);

const LEASE_MS = 30_000;

let app: TestApp | undefined;
afterEach(async () => {
  await app?.runplane.close();
  app = undefined;
});

describe("delivery status after a crash that left a lease behind (D31)", () => {
  it("says an attempt is under way until the lease expires on the instance's clock, and not from then on", async () => {
    const clock: ManualClock = manualClock();
    app = await createTestApp({ clock, transport: unavailable, publicUrl: "https://runplane.example" });
    await attachTask(app, await createTask(app, "scanner"), "mandatory");
    const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await app.runplane.runTasks.startStage(run.id, "post_plan");
    const resultId = (await app.runplane.runTasks.listResults(stages[0]!.id))[0]!.id;
    expect(await createDispatcher(app.runplane, { random: () => 0, owner: "test" }).tick()).toMatchObject({ attempted: 1, failed: 1 });

    // The retry is due; another host claims it and crashes before it sends or records anything.
    clock.advance(MINUTE);
    const [claimed] = await app.runplane.runTasks.deliveries.claim({ owner: "crashed-host", leaseMs: LEASE_MS, limit: 10 });
    expect(claimed!.row.taskResultId).toBe(resultId);
    const leaseEnd = Date.parse(claimed!.row.leaseExpiresAt!);
    expect(leaseEnd).toBe(clock.ms + LEASE_MS);

    const page = createResultsPage(app.runplane, { prefix: "/app" });
    const sentence = async (): Promise<string> => {
      const response = await page(new Request(`http://localhost/app/runs/${run.id}`, { headers: { authorization: `Bearer ${app!.ownerToken}` } }));
      return /<p class="delivery-state[^"]*">([\s\S]*?)<\/p>/.exec(await response.text())?.[1] ?? "";
    };
    const status = async () => (await app!.runplane.runTasks.deliveryStatus(resultId))!;

    expect(await status()).toMatchObject({ attempts: 1, underWay: true });
    expect(await sentence()).toMatch(/^Retrying: attempt 2 of at most \d+ is under way, /);
    clock.set(leaseEnd - 1);
    expect((await status()).underWay).toBe(true);

    // The lease has run out: nobody is attempting any more.
    clock.set(leaseEnd);
    expect(await status()).toMatchObject({ now: new Date(leaseEnd).toISOString(), attempts: 1, underWay: false });
    expect(await sentence()).toMatch(/^Retrying: attempt 1 of at most \d+, last answer 503 .*, next try due now, /);
    clock.advance(MINUTE);
    expect((await status()).underWay).toBe(false);
  });
});
