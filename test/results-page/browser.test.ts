import { existsSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResultsPage } from "../../src/index.js";
import { toNodeListener } from "../../src/node.js";
import { seedFailing } from "./failing-fixtures.js";
import { resultsPageFor, seedRun, type SeededRun } from "./fixtures.js";

/** End to end in real headless Chromium (Debian's, see toolchain.md "Browser tests"). */

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = new URL("../artifacts/", import.meta.url).pathname;
const available = existsSync(CHROMIUM);
// Locally a missing browser skips (and says why); in CI it fails: CI installs it (.ci/run).
if (!available && process.env.CI) {
  describe("results page in a browser: the browser", () => {
    it("is installed at /usr/bin/chromium", () => {
      throw new Error(`CI needs ${CHROMIUM} (apt-get install -y chromium)`);
    });
  });
} else if (!available) console.warn(`results page browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.skipIf(!available)("results page in a browser", () => {
  let seeded: SeededRun;
  let server: Server;
  let browser: Browser;
  let base: string;
  const dialogs: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    seeded = await seedRun();
    server = createServer(toNodeListener(resultsPageFor(seeded.app)));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    seeded?.dispose();
  });

  const watch = (page: Page): Page => {
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on("console", (message) => {
      if (/content security policy/i.test(message.text())) cspViolations.push(message.text());
    });
    return page;
  };

  it("signs in, shows coloured labels with icons, filters by severity and never runs injected script", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = watch(await context.newPage());
    const runUrl = `${base}/app/runs/${seeded.runId}`;

    // Without a cookie: the 401 page with the sign-in form, which comes back to the run.
    expect((await page.goto(runUrl))!.status()).toBe(401);
    await page.fill('input[name="token"]', seeded.app.ownerToken);
    await Promise.all([page.waitForURL(runUrl), page.click('button[type="submit"]')]);
    expect(await page.locator("h1").textContent()).toBe("Run task results");
    const cookies = await context.cookies();
    expect(cookies).toMatchObject([{ name: "runplane_token", httpOnly: true, sameSite: "Strict", path: "/app/" }]);

    // Tag labels: colour and a visible icon per level; `none` is plain, without an icon.
    const style = (selector: string) =>
      page.locator(selector).first().evaluate((el) => {
        const s = getComputedStyle(el);
        const icon = el.querySelector("svg");
        const box = icon?.getBoundingClientRect();
        return { background: s.backgroundColor, color: s.color, border: s.borderTopColor, icon: box ? Math.round(box.width) : 0 };
      });
    expect(await style(".tag-error")).toMatchObject({ background: "rgb(254, 243, 242)", color: "rgb(180, 35, 24)", border: "rgb(249, 112, 102)" });
    expect(await style(".tag-warning")).toMatchObject({ background: "rgb(255, 250, 235)", color: "rgb(147, 55, 13)" });
    expect(await style(".tag-info")).toMatchObject({ background: "rgb(239, 248, 255)", color: "rgb(23, 92, 211)" });
    expect(await style(".tag-none")).toMatchObject({ background: "rgb(255, 255, 255)", color: "rgb(52, 64, 84)", icon: 0 });
    for (const level of ["error", "warning", "info"]) expect((await style(`.tag-${level}`)).icon).toBeGreaterThan(10);
    // The level is also in the accessible name, not only in the colour.
    expect(await page.locator(".tag-error").first().evaluate((el) => el.textContent)).toBe("Error: Critical");

    // Open the Markdown body of the critical finding for the screenshot.
    await page.locator("tr[data-severity=error] summary").first().click();
    expect(await page.locator("tr[data-severity=error] .markdown strong").textContent()).toBe("22");
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}results-page.png`, fullPage: true });

    // Filter through the plain GET form.
    await page.selectOption('select[name="severity"]', "Critical");
    await Promise.all([page.waitForURL(/severity=Critical/), page.click('form.filters button[type="submit"]')]);
    expect(await page.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-severity")))).toStrictEqual(["error"]);
    expect(await page.locator('select[name="severity"]').inputValue()).toBe("Critical");
    await page.screenshot({ path: `${ARTIFACTS}results-page-filtered.png`, fullPage: true });

    // Injected markup stayed text: no script ran, no dialog, no javascript: link.
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    await page.goto(runUrl);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await page.locator("script").count()).toBe(0);
    expect(await page.locator('a[href^="javascript" i]').count()).toBe(0);
    expect(await page.getByText("<script>window.__pwned=1</script>").count()).toBeGreaterThan(0);
    expect(dialogs).toStrictEqual([]);
    // The inline stylesheet is allowed by its hash: nothing was refused.
    expect(cspViolations).toStrictEqual([]);
    await context.close();
  });

  it("words a failing integration, shows its answer once Details is opened, and retries it from the button", async () => {
    // decision D31: an integration answering every request 401, on its own server.
    const failing = await seedFailing();
    const own = createServer(toNodeListener(createResultsPage(failing.app.runplane, { prefix: "/app" })));
    await new Promise<void>((resolve) => own.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(own.address() as AddressInfo).port}`;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = watch(await context.newPage());
      const runUrl = `${origin}/app/runs/${failing.runs.retrying}`;
      await page.goto(runUrl);
      await page.fill('input[name="token"]', failing.app.ownerToken);
      await Promise.all([page.waitForURL(runUrl), page.click('form[action="/app/login"] button[type="submit"]')]);
      const state = page.locator(".delivery-state");
      expect(await state.innerText()).toMatch(/^Retrying: attempt 5 of at most \d+, last answer 401 Unauthorized, next try in 10 s, gives up at 01:10:00 UTC\.$/);
      // The answer is behind the toggle: hidden until Details is opened, then shown as text.
      const excerpt = page.locator("pre.excerpt").first();
      expect(await excerpt.isVisible()).toBe(false);
      await page.locator("details.attempts summary").click();
      expect(await excerpt.isVisible()).toBe(true);
      expect(await excerpt.innerText()).toBe('{"error":"Unauthorized: token [redacted] is not known here <script>window.__pwned=1</script>"}');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}results-page-failing.png`, fullPage: true });
      // The browser's own form post (Sec-Fetch-Site: same-origin) comes back with a notice.
      await Promise.all([page.waitForURL(/notice=retry-started/), page.click("form.retry button")]);
      expect(await page.locator("p.notice").innerText()).toMatch(/^Retry asked for/);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
      expect(cspViolations).toStrictEqual([]);
    } finally {
      await context.close();
      await new Promise((resolve) => own.close(resolve));
      await failing.app.runplane.close();
    }
  });

  it("works with JavaScript off: the filter form submits and the table follows", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, extraHTTPHeaders: { authorization: `Bearer ${seeded.app.ownerToken}` } });
    const page = watch(await context.newPage());
    await page.goto(`${base}/app/runs/${seeded.runId}`);
    await page.selectOption('select[name="status"]', "Open");
    await Promise.all([page.waitForURL(/status=Open/), page.click('form.filters button[type="submit"]')]);
    const ids = await page.locator("tbody tr .outcome-id").allTextContents();
    expect(ids).toStrictEqual(["crit", "med"]);
    expect(dialogs).toStrictEqual([]);
    await context.close();
  });
});
