import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionDescription } from "../../src/services/principals.js";
import { MAX_SESSIONS_PER_TOKEN } from "../../src/services/sessions.js";
import { resultsPageFor, seedRun, type SeededRun } from "./fixtures.js";

// The results page signs in with a server-side session, never the API token in the cookie.
const HOUR = 60 * 60 * 1000;
const STALE = "Your sign-in is no longer valid. Sign in again.";

let seeded: SeededRun;
let page: (request: Request) => Promise<Response>;
beforeAll(async () => {
  seeded = await seedRun();
  page = resultsPageFor(seeded.app);
});
afterAll(() => seeded.dispose());

const runPath = () => `/app/runs/${seeded.runId}`;
const directory = () => seeded.app.runplane.directory;
const cookieHeader = (value: string) => `runplane_token=${encodeURIComponent(value)}`;

/** Signs in with the form and resolves the cookie's value; `cookie` is the browser's current one. */
async function signIn(token: string, cookie?: string, on = page): Promise<string> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" };
  if (cookie !== undefined) headers.cookie = cookieHeader(cookie);
  const res = await on(new Request("http://localhost/app/login", { method: "POST", headers, body: new URLSearchParams({ token }).toString() }));
  expect(res.status).toBe(303);
  const match = /^runplane_token=([^;]+);/.exec(res.headers.get("set-cookie") ?? "");
  if (!match) throw new Error("no cookie set");
  return decodeURIComponent(match[1]!);
}

async function visit(cookie: string, path = runPath(), on = page): Promise<{ status: number; setCookie: string | null; html: string }> {
  const res = await on(new Request(`http://localhost${path}`, { headers: { cookie: cookieHeader(cookie) } }));
  return { status: res.status, setCookie: res.headers.get("set-cookie"), html: await res.text() };
}

/** Refused as a stale sign-in: 401, the cookie cleared, the person asked to sign in again. */
async function expectSignedOut(cookie: string, on = page): Promise<void> {
  const res = await visit(cookie, runPath(), on);
  expect(res.status).toBe(401);
  expect(res.setCookie).toBe("runplane_token=; HttpOnly; SameSite=Strict; Path=/app/; Max-Age=0");
  expect(res.html).toContain(STALE);
}

/** A fresh API token of the owner, so revoking it leaves the suite's own tokens alone. */
const ownerToken = async () => (await directory().createApiToken({ organization: "acme", kind: "user", userId: "user-owner" })).token;

describe("results page sessions", () => {
  it("never puts the API token in the cookie, in any encoding", async () => {
    const token = seeded.app.ownerToken;
    const cookie = await signIn(token);
    const secret = token.split(".")[1]!;
    for (const value of [token, secret]) {
      for (const form of [value, encodeURIComponent(value), Buffer.from(value).toString("base64"), Buffer.from(value).toString("base64url"), Buffer.from(value).toString("hex")]) {
        expect(cookie).not.toContain(form);
      }
    }
  });

  it("keeps the person signed in across requests with a session record of the same principal", async () => {
    const cookie = await signIn(seeded.app.ownerToken);
    for (const path of [runPath(), "/app/", "/app/acme/alpha-ws"]) expect((await visit(cookie, path)).status, path).toBe(200);
    const session = await directory().findApiToken(cookie);
    const signedInWith = await directory().findApiToken(seeded.app.ownerToken);
    expect(session).toMatchObject({ organization: "acme", kind: "user", userId: "user-owner", teamId: null });
    expect(session!.id).not.toBe(signedInWith!.id);
    expect(session!.description).toMatch(new RegExp(`^results page session of ${signedInWith!.id} until `));
  });

  it("revokes the session on the server at sign-out: the old cookie replayed gets the sign-in page", async () => {
    const cookie = await signIn(seeded.app.ownerToken);
    expect((await visit(cookie)).status).toBe(200);
    const out = await page(new Request("http://localhost/app/logout", { method: "POST", headers: { cookie: cookieHeader(cookie), "sec-fetch-site": "same-origin" } }));
    expect(out.status).toBe(303);
    expect(await directory().findApiToken(cookie)).toBeNull();
    await expectSignedOut(cookie);
    // An API token is no session (the page refuses it as a cookie), and sign-out leaves it alone.
    expect((await visit(seeded.app.ownerToken)).status).toBe(401);
    expect((await seeded.app.call("GET", "/api/v2/organizations/acme/tasks")).status).toBe(200);
  });

  it("ends the sessions of an API token when that token is revoked", async () => {
    const token = await ownerToken();
    const cookie = await signIn(token);
    expect((await visit(cookie)).status).toBe(200);
    await directory().revokeApiToken((await directory().findApiToken(token))!.id);
    expect(await directory().findApiToken(cookie)).not.toBeNull();
    await expectSignedOut(cookie);
    // The orphaned session record is deleted when met.
    expect(await directory().findApiToken(cookie)).toBeNull();
  });

  it("refuses and clears an expired session, and deletes its record", async () => {
    const cookie = await signIn(seeded.app.ownerToken);
    seeded.app.clock.advance(8 * HOUR - 60_000);
    expect((await visit(cookie)).status).toBe(200);
    seeded.app.clock.advance(60_000);
    await expectSignedOut(cookie);
    expect(await directory().findApiToken(cookie)).toBeNull();
  });

  it("lasts as long as the sessionLifetimeMs option says", async () => {
    const short = resultsPageFor(seeded.app, { sessionLifetimeMs: 60_000 });
    const cookie = await signIn(seeded.app.ownerToken, undefined, short);
    expect((await visit(cookie, runPath(), short)).status).toBe(200);
    seeded.app.clock.advance(60_000);
    await expectSignedOut(cookie, short);
    expect(() => resultsPageFor(seeded.app, { sessionLifetimeMs: 0 })).toThrow(/sessionLifetimeMs/);
    // A session whose end could not be written down would be a plain API token: refused, none made.
    await expect(seeded.app.runplane.auth.sessions.create(seeded.app.ownerToken, 1e15)).rejects.toThrow(/lifetime/);
  });

  it("keeps a session's end on the server: an edited cookie or a hand-written session record extends nothing", async () => {
    const cookie = await signIn(seeded.app.ownerToken);
    await expectSignedOut(`${cookie}.${Date.UTC(2100, 0, 1)}`);
    await expectSignedOut(`${cookie.slice(0, -1)}${cookie.endsWith("A") ? "B" : "A"}`);
    // A token described by hand as a long session of the owner's token, but of another principal.
    const owner = (await directory().findApiToken(seeded.app.ownerToken))!;
    const forged = await directory().createApiToken({
      organization: "acme",
      kind: "user",
      userId: "user-dev",
      description: sessionDescription(owner.id, "2100-01-01T00:00:00.000Z"),
    });
    await expectSignedOut(forged.token);
    expect(await directory().findApiToken(forged.token)).toBeNull();
  });

  it("refuses a session cookie's value as a bearer token, at the API and on the page", async () => {
    const cookie = await signIn(seeded.app.ownerToken);
    const api = await seeded.app.call("GET", "/api/v2/organizations/acme/tasks", { token: cookie });
    expect(api.status).toBe(401);
    const bearer = await page(new Request(`http://localhost${runPath()}`, { headers: { authorization: `Bearer ${cookie}` } }));
    expect(bearer.status).toBe(401);
    expect(await seeded.app.runplane.auth.authenticate(new Request("http://localhost/", { headers: { authorization: `Bearer ${cookie}` } }))).toBeNull();
  });

  it("acts exactly as the token signed in with, and a session cannot sign in to start another", async () => {
    const cookie = await signIn(seeded.app.devToken);
    const again = await page(
      new Request("http://localhost/app/login", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ token: cookie }).toString(),
      }),
    );
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    const asDev = await seeded.app.runplane.auth.authenticate(new Request("http://localhost/", { headers: { authorization: `Bearer ${seeded.app.devToken}` } }));
    expect(await seeded.app.runplane.auth.sessions.authenticate(cookie)).toEqual(asDev);
    expect((await visit(cookie)).status).toBe(404);
  });

  it("ends the browser's previous session when it signs in again", async () => {
    const first = await signIn(seeded.app.ownerToken);
    const second = await signIn(seeded.app.ownerToken, first);
    expect(second).not.toBe(first);
    expect(await directory().findApiToken(first)).toBeNull();
    await expectSignedOut(first);
    expect((await visit(second)).status).toBe(200);
  });

  it("keeps at most MAX_SESSIONS_PER_TOKEN sessions of one token, ending the oldest: signing in in a loop grows nothing", async () => {
    const token = (await directory().createApiToken({ organization: "acme", kind: "user", userId: "user-dev" })).token;
    const parentId = token.split(".")[0]!;
    const sessions = async () =>
      (await directory().listApiTokens({ organization: "acme" }, { offset: 0, limit: 1000 })).items.filter((t) => t.description.includes(`session of ${parentId} `));
    const cookies: string[] = [];
    for (let i = 0; i < 3 * MAX_SESSIONS_PER_TOKEN; i++) cookies.push(await signIn(token));
    expect(await sessions()).toHaveLength(MAX_SESSIONS_PER_TOKEN);
    for (const old of cookies.slice(0, -MAX_SESSIONS_PER_TOKEN)) await expectSignedOut(old);
    for (const live of cookies.slice(-MAX_SESSIONS_PER_TOKEN)) expect(await seeded.app.runplane.auth.sessions.authenticate(live)).not.toBeNull();
  });
});
