import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createResultsPage } from "../../src/index.js";
import { maxAttemptsBefore } from "../../src/delivery/retry-schedule.js";
import { START } from "../delivery/support.js";
import { seedFailing, type FailingSeed } from "./failing-fixtures.js";

// decision D31 on the results page: a failing integration is worded on the
// run page with its attempts behind Details, marked in the runs lists, and retried by a button for
// whoever may do it through the API, from this site's own page only.

let seed: FailingSeed;
let page: (request: Request) => Promise<Response>;
beforeEach(async () => {
  seed = await seedFailing();
  page = createResultsPage(seed.app.runplane, { prefix: "/app" });
});
afterEach(() => seed.app.runplane.close());

async function get(path: string, token = seed.app.ownerToken): Promise<{ status: number; html: string }> {
  const response = await page(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${token}` } }));
  return { status: response.status, html: await response.text() };
}

const ORIGIN = { origin: "http://localhost" };
async function retry(resultId: string, runId = seed.runs.retrying, headers: Record<string, string> = ORIGIN, token: string | null = seed.app.ownerToken) {
  const response = await page(
    new Request(`http://localhost/app/runs/${runId}/results/${resultId}/retry`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: new URLSearchParams({ back: `/app/acme/alpha-ws/runs/${runId}` }).toString(),
    }),
  );
  return { status: response.status, location: response.headers.get("location"), html: await response.text() };
}

const detailsOf = (html: string): string => /<details class="attempts">[\s\S]*?<\/details>/.exec(html)?.[0] ?? "";
const sentenceOf = (html: string): string => /<p class="delivery-state[^"]*">([\s\S]*?)<\/p>/.exec(html)?.[1] ?? "";
/** The run's row in a runs list (whose first cell is the run's link; the home's workspace table links runs later). */
const rowOf = (html: string, runId: string): string =>
  [...html.matchAll(/<tr>\n<td><a class="mono"[\s\S]*?<\/tr>/g)].map((m) => m[0]).find((r) => r.includes(`>${runId}<`)) ?? "";
const dueAt = async (resultId: string) => (await seed.app.storage.taskDeliveries.listByResult(resultId))[0]!.dueAt;

describe("results page: a failing integration", () => {
  it("says a retried result is retrying: its attempt, the bound from the schedule, last answer, next try and deadline", async () => {
    const { html } = await get(`/app/runs/${seed.runs.retrying}`);
    // Attempt 5 was at +15 s, the 6th is due at +31 s, the clock is at +21 s; the window ends at +10 min.
    const first = START + 3_600_000;
    const bound = maxAttemptsBefore(5, first + 31_000, first + 600_000);
    expect(bound).toBeGreaterThanOrEqual(15);
    expect(sentenceOf(html)).toBe(
      `Retrying: attempt 5 of at most ${bound}, last answer 401 Unauthorized, next try in 10 s, gives up at <time datetime="2026-01-01T01:10:00.000Z">01:10:00 UTC</time>.`,
    );
    expect(html).toContain("Failing integration: gatekeeper retrying.");
  });

  it("shows each attempt and the integration's answer, escaped and redacted, only inside the Details toggle", async () => {
    const { html } = await get(`/app/runs/${seed.runs.retrying}`);
    const details = detailsOf(html);
    expect(details).toMatch(/^<details class="attempts"><summary>Details: attempts and answers<\/summary>/);
    expect([...details.matchAll(/<tr data-outcome="answered">\n<td>(\d+)<\/td>/g)].map((m) => Number(m[1]))).toStrictEqual([5, 4, 3, 2, 1]);
    const excerpt = "<pre class=\"excerpt\">{&quot;error&quot;:&quot;Unauthorized: token [redacted] is not known here &lt;script&gt;window.__pwned=1&lt;/script&gt;&quot;}</pre>";
    expect(details).toContain(excerpt);
    expect(details).toContain('<time datetime="2026-01-01T01:00:15.000Z">2026-01-01 01:00:15 UTC</time>');
    // Nowhere outside the toggle, and never the script itself.
    expect(html.replace(details, "")).not.toContain("is not known here");
    expect(html).not.toContain("<script>");
  });

  it("says why a result ended unreachable: its message, the attempts made and the last answer", async () => {
    const { html } = await get(`/app/runs/${seed.runs.unreachable}`);
    expect(html).toContain('<p class="message">Task request was not delivered before the deadline: responded with 401');
    expect(sentenceOf(html)).toBe(
      "Unreachable: the integration never accepted the request (an answer of 200) before the deadline, 10 attempts made, last answer 401 Unauthorized.",
    );
    expect(detailsOf(html)).toContain("<td>10</td>");
    // A final result has nothing to retry: no button.
    expect(html).not.toContain("Retry now");
  });

  it("marks runs with failing integrations in the workspace's runs and the recent runs", async () => {
    const workspace = await get("/app/acme/alpha-ws");
    expect(rowOf(workspace.html, seed.runs.retrying)).toContain('<span class="badge status-failing">integration failing</span> <span class="failing-names">gatekeeper retrying</span>');
    expect(rowOf(workspace.html, seed.runs.unreachable)).toContain('<span class="failing-names">gatekeeper unreachable</span>');
    const home = await get("/app/");
    expect(rowOf(home.html, seed.runs.retrying)).toContain("integration failing");
    expect(rowOf(home.html, seed.runs.clean)).toContain("all good");
    expect(rowOf(home.html, seed.runs.clean)).not.toContain("integration failing");
    const clean = rowOf((await get("/app/acme/beta-ws")).html, seed.runs.clean);
    expect(clean).toContain('<span class="badge status-passed"');
    expect(clean).not.toContain("failing");
  });
});

describe("results page: Retry now", () => {
  it("is a form for a credential that may resend; it makes the next attempt due now and comes back with a notice", async () => {
    const { html } = await get(`/app/runs/${seed.runs.retrying}`);
    expect(html).toContain(`<form method="post" action="/app/runs/${seed.runs.retrying}/results/${seed.results.retrying}/retry" class="retry">`);
    const before = await dueAt(seed.results.retrying);
    const res = await retry(seed.results.retrying);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/app/acme/alpha-ws/runs/${seed.runs.retrying}?notice=retry-started#result-${seed.results.retrying}`);
    expect(Date.parse(await dueAt(seed.results.retrying))).toBeLessThan(Date.parse(before));
    // The dispatcher makes attempt 6 at once, without the clock moving.
    await seed.tick();
    const after = await get(`/app/acme/alpha-ws/runs/${seed.runs.retrying}?notice=retry-started`);
    expect(after.html).toContain('<p class="notice" role="status">Retry asked for: the next attempt starts now; reload the page for its answer.</p>');
    expect(sentenceOf(after.html)).toMatch(/^Retrying: attempt 6 of at most \d+, last answer 401 Unauthorized, next try in 32 s,/);
  });

  it("is absent for a credential that reads the run but may not resend, and its post is 404 as in the API", async () => {
    await seed.app.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    const { status, html } = await get(`/app/runs/${seed.runs.retrying}`, seed.app.devToken);
    expect(status).toBe(200);
    expect(sentenceOf(html)).toMatch(/^Retrying: attempt 5 /);
    expect(html).not.toContain("Retry now");
    // decision D63: nor what the integration answered, which is for who manages its run tasks.
    expect(detailsOf(html)).toContain("shown to who manages run tasks");
    expect(html).not.toContain("is not known here");
    const before = await dueAt(seed.results.retrying);
    expect((await retry(seed.results.retrying, seed.runs.retrying, ORIGIN, seed.app.devToken)).status).toBe(404);
    expect((await retry(seed.results.retrying, seed.runs.retrying, ORIGIN, seed.app.otherOrgToken)).status).toBe(404);
    expect((await retry(seed.results.retrying, seed.runs.retrying, ORIGIN, null)).status).toBe(401);
    // A result of another run is not this run's.
    expect((await retry(seed.results.retrying, seed.runs.unreachable)).status).toBe(404);
    expect(await dueAt(seed.results.retrying)).toBe(before);
  });

  it("refuses a cross-site post (CSRF) and one that does not prove its origin, changing nothing", async () => {
    const before = await dueAt(seed.results.retrying);
    const refused: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { origin: "https://evil.example" }, { origin: "null" }, {}];
    for (const headers of refused) {
      const res = await retry(seed.results.retrying, seed.runs.retrying, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.html).toContain("Retry from this site&#39;s own run page.");
    }
    expect(await dueAt(seed.results.retrying)).toBe(before);
    expect((await retry(seed.results.retrying, seed.runs.retrying, { "sec-fetch-site": "same-origin" })).status).toBe(303);
  });

  it("compares the Origin's scheme, host and port with the page's, not the host alone", async () => {
    const before = await dueAt(seed.results.retrying);
    // The page is http://localhost: another scheme or port is another origin.
    for (const origin of ["https://localhost", "http://localhost:8080", "https://localhost:80", "http://localhost.evil.example"]) {
      expect((await retry(seed.results.retrying, seed.runs.retrying, { origin })).status, origin).toBe(403);
    }
    expect(await dueAt(seed.results.retrying)).toBe(before);
    expect((await retry(seed.results.retrying, seed.runs.retrying, { origin: "http://localhost:80" })).status).toBe(303);
  });

  it("behind a proxy that terminates TLS (secureCookie), takes the page's scheme as https", async () => {
    page = createResultsPage(seed.app.runplane, { prefix: "/app", secureCookie: true });
    const before = await dueAt(seed.results.retrying);
    expect((await retry(seed.results.retrying, seed.runs.retrying, { origin: "http://localhost" })).status).toBe(403);
    expect(await dueAt(seed.results.retrying)).toBe(before);
    expect((await retry(seed.results.retrying, seed.runs.retrying, { origin: "https://localhost" })).status).toBe(303);
  });

  it("shows a refusal (the API's 409) as a notice on the run page, not an error page", async () => {
    const res = await retry(seed.results.unreachable, seed.runs.unreachable);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/app/acme/alpha-ws/runs/${seed.runs.unreachable}?notice=retry-final#result-${seed.results.unreachable}`);
    const { status, html } = await get(`/app/runs/${seed.runs.unreachable}?notice=retry-final`);
    expect(status).toBe(200);
    expect(html).toContain('<p class="notice" role="status">Not retried: the result has already reached a final status.</p>');
    // Only the page's own sentences: an unknown notice shows nothing.
    expect((await get(`/app/runs/${seed.runs.unreachable}?notice=%3Cb%3Ehi`)).html).not.toContain('class="notice"');
    // A GET of the action path is not an action.
    expect((await get(`/app/runs/${seed.runs.retrying}/results/${seed.results.retrying}/retry`)).status).toBe(405);
  });
});
