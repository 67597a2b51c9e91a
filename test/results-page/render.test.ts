import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResultsPage, type Principal } from "../../src/index.js";
import { MAX_BODY_CHARS, renderMarkdown } from "../../src/results-page/markdown.js";
import { resultsPageFor, seedRun, type SeededRun } from "./fixtures.js";

let seeded: SeededRun;
let page: (request: Request) => Promise<Response>;
beforeAll(async () => {
  seeded = await seedRun();
  page = resultsPageFor(seeded.app);
});
afterAll(() => seeded.dispose());

interface Got {
  status: number;
  headers: Headers;
  html: string;
}

async function get(path: string, init: { token?: string | null; cookie?: string; headers?: Record<string, string>; method?: string; body?: string } = {}): Promise<Got> {
  const headers: Record<string, string> = { ...init.headers };
  const token = init.token === undefined ? seeded.app.ownerToken : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (init.cookie) headers.cookie = init.cookie;
  const response = await page(new Request(`http://localhost${path}`, { method: init.method ?? "GET", headers, body: init.body ?? null }));
  return { status: response.status, headers: response.headers, html: await response.text() };
}
const runPath = (query = "") => `/app/runs/${seeded.runId}${query}`;
const login = (form: Record<string, string>, headers: Record<string, string> = {}, origin = "http://localhost") =>
  page(
    new Request(`${origin}/app/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(form).toString(),
    }),
  );

/** `[severity level, outcome id]` of every outcome row, in page order. */
const rows = (html: string): [string, string][] =>
  [...html.matchAll(/<tr data-severity="([a-z]+)">[\s\S]*?<span class="outcome-id mono">([^<]+)<\/span>/g)].map((m) => [m[1]!, m[2]!]);
const rowOf = (html: string, outcomeId: string): string => {
  const row = [...html.matchAll(/<tr data-severity[\s\S]*?<\/tr>/g)].map((m) => m[0]).find((r) => r.includes(`mono">${outcomeId}<`));
  if (!row) throw new Error(`no row for ${outcomeId}`);
  return row;
};
const cell = (row: string, name: string): string => new RegExp(`<td class="${name}">([\\s\\S]*?)</td>\\n`).exec(row)![1]!;

describe("results page: the run", () => {
  it("shows each task stage with its status and timestamps", async () => {
    const { status, html } = await get(runPath());
    expect(status).toBe(200);
    expect(html).toMatch(/<h2>Post-plan stage<\/h2><span class="badge status-failed">failed<\/span>/);
    expect(html).toMatch(/<li>failed <time datetime="2026-01-01T00:00:00\.\d{3}\+00:00">2026-01-01 00:00:00 UTC<\/time><\/li>/);
    expect(html).toContain("acme / alpha-ws");
    expect(html).toContain("Deploy &lt;b&gt;v2&lt;/b&gt;");
  });

  it("shows each result with task name, enforcement level, status, message and a safe link", async () => {
    const { html } = await get(runPath());
    expect(html).toMatch(/<h3>scanner<\/h3>\n<span class="badge level-mandatory">mandatory<\/span><span class="badge status-failed">failed<\/span>/);
    expect(html).toMatch(/<h3>linter<\/h3>\n<span class="badge level-advisory">advisory<\/span><span class="badge status-passed">passed<\/span>/);
    expect(html).toContain('<p class="message">Style is fine</p>');
    expect(html).toContain('<a href="https://linter.example/report" rel="noopener noreferrer nofollow">https://linter.example/report</a>');
    // The scanner's message carries a script and its url is javascript: both stay inert.
    expect(html).toContain('<p class="message">2 problems &lt;script&gt;window.__pwned=1&lt;/script&gt;</p>');
    expect(html).toContain("More information: <span class=\"muted\" title=\"Only http and https links are shown\">link withheld</span>");
  });

  it("lists outcomes in a table with Severity and Status columns, most severe first", async () => {
    const { html } = await get(runPath());
    expect(html).toContain('<th scope="col">Severity</th><th scope="col">Status</th><th scope="col">Outcome</th><th scope="col">Tags</th><th scope="col">Link</th>');
    expect(rows(html)).toStrictEqual([
      ["error", "crit"],
      ["warning", "med"],
      ["info", "low"],
      ["none", "plain"],
      ["none", "evil"],
      ["info", "lint-1"],
    ]);
    expect(html).toContain("<caption>5 outcomes, most severe first</caption>");
  });

  it("reads the enriched severity and status keys in any case into their own columns (D18)", async () => {
    const { html } = await get(runPath());
    const crit = rowOf(html, "crit");
    expect(cell(crit, "severity")).toContain(">Critical</span>");
    expect(cell(crit, "status")).toContain(">Open</span>");
    expect(cell(crit, "tags")).toContain('<span class="tag-key">Category</span>');
    expect(cell(crit, "tags")).not.toContain("Critical");
    expect(cell(rowOf(html, "med"), "severity")).toContain(">Medium</span>"); // SEVERITY
    expect(cell(rowOf(html, "low"), "status")).toBe('<span class="tag tag-none" data-level="none">Fixed</span>'); // STATUS
    expect(cell(rowOf(html, "plain"), "severity")).toBe('<span class="muted">—</span>');
  });

  it("renders tags as coloured labels with an icon and level text per level, and none as plain text", async () => {
    const { html } = await get(runPath());
    const crit = rowOf(html, "crit");
    for (const [level, name, label] of [["error", "Error", "Critical"], ["warning", "Warning", "Open"], ["info", "Info", "network"]] as const) {
      expect(crit).toMatch(
        new RegExp(`<span class="tag tag-${level}" data-level="${level}" title="${name}"><svg [^>]*aria-hidden="true"[^>]*>.+?</svg><span class="sr-only">${name}: </span>${label}</span>`),
      );
    }
    expect(crit).toContain('<span class="tag tag-none" data-level="none">plain-label</span>');
    // Distinct icons per level.
    const icons = ["error", "warning", "info"].map((l) => new RegExp(`tag-${l}"[^>]*>(<svg[\\s\\S]*?</svg>)`).exec(html)![1]);
    expect(new Set(icons).size).toBe(3);
  });

  it("filters outcomes by severity and status label, case-insensitively, through query parameters", async () => {
    expect(rows((await get(runPath("?severity=critical"))).html)).toStrictEqual([["error", "crit"]]);
    expect(rows((await get(runPath("?status=OPEN"))).html).map(([, id]) => id)).toStrictEqual(["crit", "med"]);
    const both = await get(runPath("?severity=Low&status=fixed"));
    expect(rows(both.html).map(([, id]) => id)).toStrictEqual(["low"]);
    expect(both.html).toContain('<option value="Low" selected>Low (info)</option>');
    expect(both.html).toContain('<option value="Fixed" selected>Fixed</option>');
    expect(both.html).toContain("<caption>1 of 5 outcomes match the filter, most severe first</caption>");
    expect(both.html).toContain("No outcome of linter matches the filter (1 loaded).");
    expect(both.html).toContain(`<a href="/app/runs/${seeded.runId}">Clear filters</a>`);
  });

  it("offers the filters as a plain GET form with selects listing the labels present, most severe first", async () => {
    const { html } = await get(runPath());
    expect(html).toContain(`<form method="get" action="/app/runs/${seeded.runId}" class="filters"`);
    expect(html).toContain(
      '<select name="severity">\n<option value="">All</option>\n<option value="Critical">Critical (error)</option><option value="Medium">Medium (warning)</option><option value="Low">Low (info)</option>',
    );
    expect(html).toContain('<select name="status">\n<option value="">All</option>\n<option value="Open">Open (warning)</option><option value="Fixed">Fixed</option>');
    // An unknown value stays selected (escaped) so the form shows what is applied.
    const odd = await get(runPath(`?severity=${encodeURIComponent('"><script>x</script>')}`));
    expect(odd.html).toContain('<option value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;" selected>');
    expect(rows(odd.html)).toStrictEqual([]);
  });

  it("renders outcome bodies as Markdown with raw HTML off and only safe links", async () => {
    const { html } = await get(runPath());
    const body = /<div class="markdown">([\s\S]*?)<\/div><\/details>/.exec(rowOf(html, "crit"))![1]!;
    expect(body).toContain("<h2>Why it matters</h2>");
    expect(body).toContain("Port <strong>22</strong> is open to <code>0.0.0.0/0</code>.");
    expect(body).toContain('<a href="https://docs.example/ssh" rel="noopener noreferrer nofollow">the guide</a>');
    expect(body).toContain('<a href="https://docs.example/bare" rel="noopener noreferrer nofollow">https://docs.example/bare</a>');
    expect(body).toContain("<p>&lt;b&gt;raw html&lt;/b&gt; stays text.</p>");
    expect(body).toContain("[a trap](javascript:window.__pwned=1)");
    // Images become links, so the integration's server is never contacted by the page itself.
    expect(body).toContain('<a href="https://tracker.example/p.png" rel="noopener noreferrer nofollow" class="image-link">image: pixel</a>');
    expect(html).not.toContain("<img");
  });

  it("escapes every value from the integration: no script, no event handler, no javascript: href", async () => {
    const { html } = await get(runPath());
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toContain("<img");
    expect(html).not.toMatch(/<[a-z]+[^>]*\son[a-z]+=/i);
    expect(html).not.toMatch(/<a [^>]*href="[^"]*javascript/i);
    expect(html).toContain("Evil &lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt; &lt;script&gt;window.__pwned=1&lt;/script&gt;");
    const evil = rowOf(html, "evil");
    expect(cell(evil, "tags")).toContain('<span class="tag-key">&lt;i&gt;key&lt;/i&gt;</span>');
    expect(cell(evil, "tags")).toContain("&lt;script&gt;alert(1)&lt;/script&gt;</span>");
    expect(cell(evil, "link")).toContain("link withheld");
    expect(cell(rowOf(html, "plain"), "link")).toContain("link withheld");
    expect(evil).toContain("<p>&lt;a href=&quot;javascript:window.__pwned=1&quot;&gt;raw link&lt;/a&gt;</p>");
    // Every href on the page is http(s), mailto or a path of this site.
    for (const [, href] of html.matchAll(/href="([^"]*)"/g)) expect(href).toMatch(/^(https?:\/\/|mailto:|\/)/);
  });

  it("sends a strict Content-Security-Policy without scripts whose style hash matches the inline stylesheet", async () => {
    const { headers, html } = await get(runPath());
    const csp = headers.get("content-security-policy")!;
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'$/);
    expect(csp).not.toContain("script-src");
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    expect(csp).toContain(`'sha256-${createHash("sha256").update(style).digest("base64")}'`);
    expect(headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(headers.get("x-content-type-options")).toBe("nosniff");
    expect(headers.get("cache-control")).toBe("no-store");
    for (const path of ["/app/runs/run-missing", "/app/login", "/app/"]) {
      expect((await get(path, { token: null })).headers.get("content-security-policy")).toBe(csp);
    }
  });
});

describe("results page: who may see it", () => {
  it("answers 401 with the sign-in form when there is no credential", async () => {
    const res = await get(runPath("?severity=Low"), { token: null });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(res.html).toContain('<form method="post" action="/app/login">');
    expect(res.html).toContain(`<input type="hidden" name="next" value="/app/runs/${seeded.runId}?severity=Low">`);
    expect(res.html).not.toContain("Critical");
  });

  it("answers 401 for an invalid bearer token and 404 for an unknown run, another organization or no permission (D4)", async () => {
    expect((await get(runPath(), { token: "at-nope.nope" })).status).toBe(401);
    const missing = await get("/app/runs/run-doesnotexist");
    expect(missing.status).toBe(404);
    const otherOrg = await get(runPath(), { token: seeded.app.otherOrgToken });
    expect(otherOrg.status).toBe(404);
    expect(otherOrg.html).toBe(missing.html);
    // user-dev belongs to team-devs, which has no grant on the run's project.
    expect((await get(runPath(), { token: seeded.app.devToken })).status).toBe(404);
    expect((await get("/app/runs/%E0%A4%A", { token: seeded.app.devToken })).status).toBe(404);
  });

  it("lets a team with runs read on the project in, exactly like the API", async () => {
    const grant = await seeded.app.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    try {
      expect((await get(runPath(), { token: seeded.app.devToken })).status).toBe(200);
      const api = await seeded.app.call("GET", `/api/v2/runs/${seeded.runId}/task-stages`, { token: seeded.app.devToken });
      expect(api.status).toBe(200);
    } finally {
      await seeded.app.runplane.teamProjects.delete(grant.id);
    }
    expect((await get(runPath(), { token: seeded.app.devToken })).status).toBe(404);
  });

  it("signs in with a token form: HttpOnly SameSite=Strict cookie on the prefix, 303 to next", async () => {
    const res = await login({ token: seeded.app.ownerToken, next: runPath("?status=open") });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(runPath("?status=open"));
    const cookie = res.headers.get("set-cookie")!;
    // The cookie holds a session, never the token (test/results-page/sessions.test.ts).
    expect(cookie).toMatch(/^runplane_token=[^;]+; HttpOnly; SameSite=Strict; Path=\/app\/$/);
    expect(cookie).not.toContain(encodeURIComponent(seeded.app.ownerToken));
    const pair = cookie.split(";")[0]!;
    const signedIn = await get(runPath(), { token: null, cookie: `other=1; ${pair}` });
    expect(signedIn.status).toBe(200);
    expect(signedIn.html).toContain('<form method="post" action="/app/logout"><button type="submit">Sign out</button></form>');
    // The token never appears in the page, raw or encoded.
    expect(signedIn.html).not.toContain(seeded.app.ownerToken);
    expect(signedIn.html).not.toContain(encodeURIComponent(seeded.app.ownerToken));
  });

  it("marks the cookie Secure when the request is https", async () => {
    const res = await login({ token: seeded.app.ownerToken }, {}, "https://runplane.example");
    expect(res.headers.get("set-cookie")).toMatch(/; HttpOnly; SameSite=Strict; Path=\/app\/; Secure$/);
    expect(res.headers.get("location")).toBe("/app/");
  });

  it("rejects an unsafe next and goes to the prefix instead", async () => {
    for (const next of [
      "https://evil.example/app/runs/x",
      "//evil.example/app/",
      "/\\evil.example/app/",
      "/%5Cevil.example",
      "javascript:alert(1)",
      "/elsewhere",
      "/app/../admin",
      "/app/\nrefresh",
      "app/runs/x",
    ]) {
      const res = await login({ token: seeded.app.ownerToken, next });
      expect(res.status, next).toBe(303);
      expect(res.headers.get("location"), next).toBe("/app/");
    }
  });

  it("refuses a wrong token without setting or echoing anything", async () => {
    const res = await login({ token: "at-wrong.<script>x</script>", next: runPath() });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
    const html = await res.text();
    expect(html).toContain("That token was not accepted.");
    expect(html).not.toContain("at-wrong");
    expect(html).toContain(`name="next" value="/app/runs/${seeded.runId}"`);
    expect((await login({ token: "  " })).status).toBe(401);
  });

  it("refuses a sign-in posted from another site, and a body that is not a form", async () => {
    expect((await login({ token: seeded.app.ownerToken }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    // A sibling subdomain is another origin: same-site is not same-origin (login CSRF).
    const sibling = await login({ token: seeded.app.ownerToken }, { "sec-fetch-site": "same-site", origin: "http://evil.localhost" });
    expect(sibling.status).toBe(403);
    expect(sibling.headers.get("set-cookie")).toBeNull();
    const signOut = await get("/app/logout", { method: "POST", token: null, cookie: `runplane_token=${seeded.app.ownerToken}`, headers: { "sec-fetch-site": "same-site" } });
    expect(signOut.status).toBe(403);
    expect(signOut.headers.get("set-cookie")).toBeNull();
    for (const site of ["same-origin", "none"]) expect((await login({ token: seeded.app.ownerToken }, { "sec-fetch-site": site })).status, site).toBe(303);
    expect((await login({ token: seeded.app.ownerToken }, { origin: "https://evil.example" })).status).toBe(403);
    const json = await page(new Request("http://localhost/app/login", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }));
    expect(json.status).toBe(400);
    const huge = await login({ token: "x".repeat(20_000) });
    expect(huge.status).toBe(400);
  });

  it("clears a cookie that no longer authenticates, and signs out", async () => {
    const stale = await get(runPath(), { token: null, cookie: "runplane_token=at-revoked.secret" });
    expect(stale.status).toBe(401);
    expect(stale.headers.get("set-cookie")).toBe("runplane_token=; HttpOnly; SameSite=Strict; Path=/app/; Max-Age=0");
    expect(stale.html).toContain("Your sign-in is no longer valid.");
    const out = await get("/app/logout", { method: "POST", token: null, cookie: `runplane_token=${seeded.app.ownerToken}`, headers: { "sec-fetch-site": "same-origin" } });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(out.headers.get("location")).toBe("/app/login");
  });

  it("serves the sign-in form at GET <prefix>/login with a safe next only", async () => {
    const res = await get(`/app/login?next=${encodeURIComponent(runPath())}`, { token: null });
    expect(res.status).toBe(200);
    expect(res.html).toContain(`name="next" value="/app/runs/${seeded.runId}"`);
    expect(res.html).toContain('<input type="password" name="token"');
    expect((await get("/app/login?next=//evil.example", { token: null })).html).not.toContain('name="next"');
  });

  it("uses the host's authenticate instead, and then serves no sign-in form", async () => {
    const owner: Principal = { organization: "acme", kind: "user", userId: "user-owner", teamIds: ["team-owners"], isOwner: true, orgPermissions: [] };
    const hosted = createResultsPage(seeded.app.runplane, {
      prefix: "/app",
      authenticate: async (request) => (request.headers.get("x-session") === "ok" ? owner : null),
    });
    expect((await hosted(new Request(`http://localhost${runPath()}`, { headers: { "x-session": "ok" } }))).status).toBe(200);
    const anonymous = await hosted(new Request(`http://localhost${runPath()}`, { headers: { authorization: `Bearer ${seeded.app.ownerToken}` } }));
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain("<form");
    expect((await hosted(new Request("http://localhost/app/login"))).status).toBe(404);
    expect((await hosted(new Request("http://localhost/app/logout", { headers: { "x-session": "ok" } }))).status).toBe(404);
  });
});

describe("results page: routing", () => {
  it("serves at the root by default, answers HEAD without a body and 405 for other methods", async () => {
    const root = createResultsPage(seeded.app.runplane);
    const ok = await root(new Request(`http://localhost/runs/${seeded.runId}`, { headers: { authorization: `Bearer ${seeded.app.ownerToken}` } }));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Post-plan stage");
    const head = await get(runPath(), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.html).toBe("");
    const post = await get(runPath(), { method: "POST", body: "" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET,HEAD");
  });

  it("opens a run from the home's form and answers 404 for paths it does not serve", async () => {
    expect((await get("/app/")).html).toContain('<form method="get" action="/app/runs"');
    const go = await get(`/app/runs?run_id=${seeded.runId}`, { token: null });
    expect(go.status).toBe(303);
    expect(go.headers.get("location")).toBe(runPath());
    expect((await get("/app/runs/x/y")).status).toBe(404);
    expect((await get("/elsewhere")).status).toBe(404);
  });
});

describe("results page: limits and Markdown links", () => {
  it("loads at most maxOutcomesPerResult outcomes per result, keeping the most severe", async () => {
    const capped = resultsPageFor(seeded.app, { maxOutcomesPerResult: 2 });
    const res = await capped(new Request(`http://localhost${runPath()}`, { headers: { authorization: `Bearer ${seeded.app.ownerToken}` } }));
    const html = await res.text();
    expect(rows(html).map(([, id]) => id)).toStrictEqual(["crit", "med", "lint-1"]);
    expect(html).toContain("<caption>The 2 most severe of 5 outcomes, most severe first</caption>");
  });

  it("allows http, https, mailto and relative links only, whatever their spelling", () => {
    const links = (md: string) => [...renderMarkdown(md).html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    expect(links("[a](https://x.example) [b](http://x.example) [c](mailto:a@x.example) [d](/docs#top) [e](#here)")).toStrictEqual([
      "https://x.example",
      "http://x.example",
      "mailto:a@x.example",
      "/docs#top",
      "#here",
    ]);
    for (const bad of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "&#106;avascript:alert(1)", "data:text/html,x", "vbscript:x", "file:///etc/passwd"]) {
      expect(links(`[x](${bad}) <${bad}>`), bad).toStrictEqual([]);
    }
    expect(links("[x][r]\n\n[r]: javascript:alert(1)")).toStrictEqual([]);
  });

  it("cuts a huge body before rendering and says so", () => {
    const cut = renderMarkdown("a".repeat(MAX_BODY_CHARS + 10));
    expect(cut.truncated).toBe(true);
    expect(renderMarkdown("short").truncated).toBe(false);
  });
});
