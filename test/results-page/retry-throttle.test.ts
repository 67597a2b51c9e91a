import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createResultsPage } from "../../src/index.js";
import { seedFailing, type FailingSeed } from "./failing-fixtures.js";

// Decision D33 on the results page: "Retry now" pressed twice within the window starts one attempt;
// the second press comes back to the run page with a notice saying why, never an error page.

let seed: FailingSeed;
let page: (request: Request) => Promise<Response>;
beforeEach(async () => {
  seed = await seedFailing();
  page = createResultsPage(seed.app.runplane, { prefix: "/app" });
});
afterEach(() => seed.app.runplane.close());

async function retry() {
  const runId = seed.runs.retrying;
  const response = await page(
    new Request(`http://localhost/app/runs/${runId}/results/${seed.results.retrying}/retry`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${seed.app.ownerToken}`, origin: "http://localhost" },
      body: new URLSearchParams({ back: `/app/acme/alpha-ws/runs/${runId}` }).toString(),
    }),
  );
  return { status: response.status, location: response.headers.get("location") };
}

describe("results page: retry now pressed twice (D33)", () => {
  it("starts one attempt and answers the second press with a notice on the run page", async () => {
    expect((await retry()).location).toContain("?notice=retry-started");
    const due = (await seed.app.storage.taskDeliveries.listByResult(seed.results.retrying))[0]!.dueAt;
    const second = await retry();
    expect(second.status).toBe(303);
    expect(second.location).toBe(`/app/acme/alpha-ws/runs/${seed.runs.retrying}?notice=retry-too-soon#result-${seed.results.retrying}`);
    expect((await seed.app.storage.taskDeliveries.listByResult(seed.results.retrying))[0]!.dueAt).toBe(due);
    const shown = await page(new Request(`http://localhost${second.location!.replace(/#.*/, "")}`, { headers: { authorization: `Bearer ${seed.app.ownerToken}` } }));
    expect(await shown.text()).toContain("Not retried: this result was retried moments ago; wait a few seconds for that attempt&#39;s answer, then try again.");
  });
});
