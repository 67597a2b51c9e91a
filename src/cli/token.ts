import { DEMO, seedDemo } from "../../examples/server/demo.js";
import { DATA_FLAGS, parse } from "./args.js";
import { withServerData } from "./open.js";

/**
 * `runplane token create [--team <id>] [--organization <name>] [--description <text>]`: a new API
 * token for the owners team (acts as owners, D21) or for `--team`, printed once; only its digest is
 * stored (D11). Works while the server runs: it is another write to the same database.
 */
export async function token(args: string[], out: (line: string) => void): Promise<void> {
  const { values, positionals, env } = parse(args, {
    team: { type: "string" },
    organization: { type: "string" },
    description: { type: "string" },
  }, DATA_FLAGS);
  if (positionals[0] !== "create" || positionals.length !== 1) throw new Error("usage: runplane token create [--team <id>] [--organization <name>]");
  const organization = typeof values.organization === "string" ? values.organization : DEMO.organization;
  const teamId = typeof values.team === "string" ? values.team : DEMO.ownersTeam;
  const description = typeof values.description === "string" ? values.description : "runplane token create";
  const secret = await withServerData(env, async (runplane, store) => {
    // A database the server never started on (only migrated) gets the demo records it would seed.
    await store.exclusively(() => seedDemo(runplane));
    // The organization first: a missing one is what the caller has to fix, not its owners team.
    if (!(await runplane.directory.organizations.get(organization))) {
      throw new Error(
        `organization ${organization} not found: the reference server has organization ${DEMO.organization} (use --organization ${DEMO.organization}, or leave it out); ` +
          "other organizations are created by a program embedding runplane, with directory.organizations.create(...)",
      );
    }
    const team = await runplane.directory.teams.get(teamId);
    if (!team || team.organization !== organization) {
      throw new Error(`team ${teamId} not found in organization ${organization}: pass --team <id> with the id of one of its teams${typeof values.team === "string" ? "" : " (its owners team acts as owners)"}`);
    }
    return (await runplane.directory.createApiToken({ organization, kind: "team", teamId, description })).token;
  });
  out(secret);
}
