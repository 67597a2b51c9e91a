import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { authorized, killAll, run, serve, type Served } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "runplane-token-lifecycle-"));
let n = 0;
const fresh = () => join(root, `d${n++}`);
const A = "admin-token-value-a-0123456789";
const B = "admin-token-value-b-0123456789";
const C = "admin-token-value-c-0123456789";

afterAll(() => {
  killAll();
  rmSync(root, { recursive: true, force: true });
});

/** The status of a read of the demo workspace's variables with `token`. */
const statusWith = async (s: Served, token: string): Promise<number> => (await fetch(`${s.api}/workspaces/ws-demo/vars`, { headers: authorized(token) })).status;

/** The banner's owners token line, once the server printed all of it. */
async function ownersLine(s: Served): Promise<string> {
  await s.printed(/owners token[^\n]*\n/);
  return /^owners token[^\n]*$/m.exec(s.output())![0];
}

const list = async (dir: string, ...flags: string[]): Promise<string[]> => {
  const result = await run(["token", "list", "--data-dir", dir, ...flags]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout.trimEnd().split("\n");
};
const adminTokenIds = async (dir: string): Promise<string[]> =>
  (await list(dir, "--team", "team-owners")).filter((line) => line.endsWith('"ADMIN_TOKEN"')).map((line) => line.split(" ")[0]!);

describe("runplane token list and revoke (issue 33.3)", () => {
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
    ["list", ["--team", "--organization"], "--description"],
    ["revoke", [], "--team"],
  ])("token %s --help lists only its own flags and the data flags, and refuses others", async (subcommand, own, other) => {
    const help = (await run(["token", subcommand, "--help"])).stdout;
    expect([...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1])).toStrictEqual([...own, "--data-dir", "--database-url", "--database-schema", "--keyring"]);
    const refused = await run(["token", subcommand, other, "x"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`unknown flag ${other}`));
  });
});

describe("ADMIN_TOKEN rotation (issue 33.3)", () => {
  it("revokes the previous ADMIN_TOKEN at a start with another value, and says exactly what it revoked", async () => {
    const dir = fresh();
    // The same value twice (hosts sharing one ADMIN_TOKEN): nothing revoked.
    for (let i = 0; i < 2; i++) {
      const s = await serve(dir, ["--admin-token", A]);
      expect(await ownersLine(s)).toBe("owners token: using ADMIN_TOKEN");
      expect(await statusWith(s, A)).toBe(200);
      expect(await s.stop()).toBe(0);
    }
    const [idA] = await adminTokenIds(dir);

    const b = await serve(dir, ["--admin-token", B]);
    expect(await ownersLine(b)).toBe(`owners token: using ADMIN_TOKEN (revoked the previous ADMIN_TOKEN, id ${idA})`);
    expect(await statusWith(b, A)).toBe(401);
    expect(await statusWith(b, B)).toBe(200);
    expect(await b.stop()).toBe(0);
    const [idB, ...others] = await adminTokenIds(dir);
    expect(others).toStrictEqual([]);
    expect(idB).not.toBe(idA);

    // Without ADMIN_TOKEN the environment names none: the last one goes too.
    const printed = await serve(dir);
    expect(await ownersLine(printed)).toBe(`owners token (printed once, revoked at next start): ${printed.token} (revoked the previous ADMIN_TOKEN, id ${idB})`);
    expect(await statusWith(printed, B)).toBe(401);
    expect(await statusWith(printed, printed.token)).toBe(200);
    expect(await printed.stop()).toBe(0);
    expect(await adminTokenIds(dir)).toStrictEqual([]);

    // "revoked at next start" holds when that start sets ADMIN_TOKEN too.
    const back = await serve(dir, ["--admin-token", C]);
    expect(await ownersLine(back)).toBe(`owners token: using ADMIN_TOKEN (revoked the token the previous start printed, id ${printed.token.split(".")[0]})`);
    expect(await statusWith(back, printed.token)).toBe(401);
    expect(await statusWith(back, C)).toBe(200);
    expect(await back.stop()).toBe(0);
  }, 120_000);

  it("never brings a revoked ADMIN_TOKEN back: a host restarting with it refuses to start, and the current one stays valid", async () => {
    // The operator's outside try: a host restarted with its old environment revoked the new value and revived the old.
    const dir = fresh();
    const a = await serve(dir, ["--admin-token", A]);
    expect(await a.stop()).toBe(0);
    const b = await serve(dir, ["--admin-token", B]);
    expect(await b.stop()).toBe(0);
    const stale = await run(["serve", "--port", "0", "--integration-port", "0", "--data-dir", dir, "--admin-token", A]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^runplane serve: ADMIN_TOKEN was revoked \(a host started with another ADMIN_TOKEN, or `runplane token revoke`\): start this host with the ADMIN_TOKEN the others use now\n$/);
    expect(stale.stdout + stale.stderr).not.toContain(A);
    // Revoked by hand, the same: a restart with that value does not revive it.
    const [idB] = await adminTokenIds(dir);
    expect((await run(["token", "revoke", idB!, "--data-dir", dir])).code).toBe(0);
    expect((await run(["serve", "--port", "0", "--integration-port", "0", "--data-dir", dir, "--admin-token", B])).code).toBe(1);
    const fresh2 = await serve(dir, ["--admin-token", C]);
    expect(await statusWith(fresh2, A)).toBe(401);
    expect(await statusWith(fresh2, B)).toBe(401);
    expect(await statusWith(fresh2, C)).toBe(200);
    expect(await fresh2.stop()).toBe(0);
  }, 120_000);
});
