import { describe, expect, it } from "vitest";
import { run, scratchDirs, serve, statusWith, tokenList as list } from "./helpers.js";

const { fresh } = scratchDirs();

describe("runplane token list and revoke", () => {
  it("lists every token one line each without a secret, and the running server refuses a revoked one at once", async () => {
    const dir = fresh();
    const s = await serve(dir);
    const ci = (await run(["token", "create", "--team", "team-devs", "--description", "ci pipeline", "--data-dir", dir])).stdout.trim();
    // Known but without access to the workspace: 404, not the 401 of an unknown token (D4).
    expect(await statusWith(s, ci)).toBe(404);
    const lines = await list(dir);
    expect(lines).toHaveLength(2);
    const line = /^(at-\S+) {2}(\S+) {2}created (\S+Z) {2}last used (never|\S+Z) {2}(".*")$/;
    expect(lines.map((l) => line.exec(l)?.slice(2).filter((_, i) => i !== 1 && i !== 2))).toStrictEqual([["team-owners", '"reference server"'], ["team-devs", '"ci pipeline"']]);
    expect(line.exec(lines[1]!)![4]).toMatch(/Z$/);
    expect(lines.join("\n")).not.toContain(s.token.split(".")[1]);
    expect(lines.join("\n")).not.toContain(ci.split(".")[1]);
    expect(await list(dir, "--team", "team-devs")).toStrictEqual([lines[1]]);

    const id = ci.split(".")[0]!;
    const revoked = await run(["token", "revoke", id, "--data-dir", dir]);
    expect(revoked.stdout).toBe(`revoked ${id} (team-devs, "ci pipeline"): refused from the next request on\n`);
    expect(await statusWith(s, ci)).toBe(401);
    expect(await statusWith(s, s.token)).toBe(200);
    expect(await list(dir, "--team", "team-devs")).toStrictEqual(["no API tokens in organization demo for team team-devs"]);
    // The whole token pasted instead of its id: its id is used, and its secret never printed.
    const again = await run(["token", "revoke", ci, "--data-dir", dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`^runplane token: API token ${id} not found \\(or already revoked\\): \`runplane token list\` shows the ids`));
    expect(again.stdout + again.stderr).not.toContain(ci.split(".")[1]);
    expect(await s.stop()).toBe(0);
  }, 60_000);

  // A revoked ADMIN_TOKEN leaves a record that is never a credential, and each results page sign-in
  // is a session record: neither is a token an operator can use or revoke, so neither is listed
  // as one; each is shown only on request, labelled.
  it("lists tokens only; sessions and revoked-token records only with --sessions or --revoked, labelled", async () => {
    const dir = fresh();
    const A = "admin-token-aaaaaaaaaaaa";
    const first = await serve(dir, ["--admin-token", A]);
    await first.stop();
    const B = "admin-token-bbbbbbbbbbbb";
    const s = await serve(dir, ["--admin-token", B]);
    const signIn = await fetch(new URL("/app/login", s.api), {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ token: B }).toString(),
    });
    expect(signIn.status).toBe(303);
    const tokens = await list(dir);
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).toMatch(/^at-\S+ {2}team-owners {2}created \S+Z {2}last used \S+ {2}"ADMIN_TOKEN"$/);
    expect(tokens[1]).toBe("(not shown: 1 results page session, --sessions; 1 revoked-token record, --revoked)");
    const sessions = await list(dir, "--sessions");
    expect(sessions).toHaveLength(3);
    expect(sessions[1]).toMatch(new RegExp(`^session {2}at-\\S+ {2}team-owners {2}created \\S+Z {2}last used \\S+ {2}results page session of ${tokens[0]!.split(" ")[0]} until \\S+Z$`));
    expect(sessions[2]).toBe("(not shown: 1 revoked-token record, --revoked)");
    const revoked = await list(dir, "--revoked", "--sessions");
    expect(revoked).toHaveLength(3);
    expect(revoked.filter((l) => l.startsWith("revoked "))).toEqual([expect.stringMatching(/^revoked {2}at-\S+ {2}team-owners {2}created \S+Z {2}a revoked ADMIN_TOKEN, kept so that no host brings it back; never a credential$/)]);
    expect(revoked.join("\n")).not.toContain(A);
    expect(await s.stop()).toBe(0);
  }, 60_000);

  it("refuses an unknown team or organization by name", async () => {
    const dir = fresh();
    const s = await serve(dir);
    await s.stop();
    const team = await run(["token", "list", "--team", "team-nope", "--data-dir", dir]);
    expect(team.stderr).toBe("runplane token: team team-nope not found in organization demo: pass --team <id> with the id of one of its teams\n");
    const organization = await run(["token", "list", "--organization", "nope", "--data-dir", dir]);
    expect(organization.stderr).toMatch(/^runplane token: organization nope not found: the reference server has organization demo/);
  }, 60_000);

  it.each([
    ["create", ["--team", "--organization", "--description"], "--keyring-x"],
    ["list", ["--team", "--organization", "--sessions", "--revoked"], "--description"],
    ["revoke", [], "--team"],
  ])("token %s --help lists only its own flags and the data flags, and refuses others", async (subcommand, own, other) => {
    const help = (await run(["token", subcommand, "--help"])).stdout;
    expect([...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1])).toStrictEqual([...own, "--data-dir", "--database-url", "--database-schema", "--keyring"]);
    const refused = await run(["token", subcommand, other, "x"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`unknown flag ${other}`));
  });
});
