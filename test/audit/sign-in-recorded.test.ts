import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultsPageFor, seedRun, type SeededRun } from "../results-page/fixtures.js";
import { eventsOf, expectNoSecret, tokenIdOf } from "./helpers.js";

let seeded: SeededRun;
let page: (request: Request, connection?: { remoteAddress?: string | null }) => Promise<Response>;
beforeAll(async () => {
  seeded = await seedRun();
  page = resultsPageFor(seeded.app);
});
afterAll(() => seeded.dispose());

const form = (path: string, body: Record<string, string>, cookie?: string) =>
  page(
    new Request(`http://localhost/app/${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "same-origin",
        // Forged: no proxy is trusted (decision D62), so the connection's address is recorded.
        "x-forwarded-for": "6.6.6.6",
        ...(cookie ? { cookie: `runplane_token=${encodeURIComponent(cookie)}` } : {}),
      },
      body: new URLSearchParams(body).toString(),
    }),
    { remoteAddress: "198.51.100.23" },
  );

// decision D53: results-page sign-ins and sign-outs are recorded as the token signed in with.
describe("audit: results page sessions", () => {
  it("records a sign-in and a sign-out with the token, the client's address and never the token or the cookie", async () => {
    const token = seeded.app.ownerToken;
    const signedIn = await form("login", { token });
    expect(signedIn.status).toBe(303);
    const cookie = decodeURIComponent(/^runplane_token=([^;]+);/.exec(signedIn.headers.get("set-cookie") ?? "")![1]!);
    expect((await form("logout", {}, cookie)).status).toBeLessThan(400);
    const sessions = (await eventsOf(seeded.app.storage)).filter((e) => e.resource.type === "session");
    expect(sessions.map((e) => e.action)).toStrictEqual(["sign-in", "sign-out"]);
    expect(sessions[0]!.actor).toMatchObject({ kind: "token", tokenId: await tokenIdOf(seeded.app, token), userId: "user-owner" });
    expect(sessions[0]!.request.clientAddress).toBe("198.51.100.23");
    expect(sessions[1]!.actor).toMatchObject({ kind: "session", tokenKind: "session", userId: "user-owner" });
    expect(sessions[1]!.resource.id).toBe(sessions[0]!.resource.id);
    await expectNoSecret(seeded.app.storage, [token, cookie]);
  });

  it("records nothing for a refused sign-in", async () => {
    const before = (await eventsOf(seeded.app.storage)).length;
    expect((await form("login", { token: "at-nope.nope" })).status).toBe(401);
    expect((await eventsOf(seeded.app.storage)).length).toBe(before);
  });
});
