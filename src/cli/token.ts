import { DEMO, seedDemo } from "../../examples/server/demo.js";
import { revokeToken } from "../../examples/server/owners-token.js";
import type { Runplane } from "../index.js";
import type { ApiTokenView } from "../services/directory.js";
import { DATA_FLAGS, parse } from "./args.js";
import { withServerData } from "./open.js";

const USAGE = "usage: runplane token create|list|revoke (runplane token <subcommand> --help for its flags)";
const TEAM = { type: "string" } as const;
const ORGANIZATION = { type: "string" } as const;

/**
 * `runplane token create|list|revoke`: API tokens of the server's data, while it runs or while it
 * is stopped (each is another read or write of the same database). Only digests are stored (D11),
 * so a secret is printed once, by create, and never again.
 */
export async function token(args: string[], out: (line: string) => void): Promise<void> {
  const [subcommand, ...rest] = args;
  if (subcommand === "create") return create(rest, out);
  if (subcommand === "list") return list(rest, out);
  if (subcommand === "revoke") return revoke(rest, out);
  throw new Error(USAGE);
}

/**
 * `create [--team <id>] [--organization <name>] [--description <text>]`: a new API token for the
 * owners team (acts as owners, D21) or for `--team`, printed once.
 */
async function create(args: string[], out: (line: string) => void): Promise<void> {
  const { values, positionals, env } = parse(args, { team: TEAM, organization: ORGANIZATION, description: { type: "string" } }, DATA_FLAGS);
  if (positionals.length) throw new Error("usage: runplane token create [--team <id>] [--organization <name>] [--description <text>]");
  const organization = typeof values.organization === "string" ? values.organization : DEMO.organization;
  const teamId = typeof values.team === "string" ? values.team : DEMO.ownersTeam;
  const description = typeof values.description === "string" ? values.description : "runplane token create";
  const secret = await withServerData(env, async (runplane, store) => {
    // A database the server never started on (only migrated) gets the demo records it would seed.
    await store.exclusively(() => seedDemo(runplane));
    await checkTeam(runplane, organization, teamId, typeof values.team === "string");
    return (await runplane.directory.createApiToken({ organization, kind: "team", teamId, description })).token;
  });
  out(secret);
}

/** `list [--team <id>] [--organization <name>]`: one line per token, oldest first, never a secret. */
async function list(args: string[], out: (line: string) => void): Promise<void> {
  const { values, positionals, env } = parse(args, { team: TEAM, organization: ORGANIZATION }, DATA_FLAGS);
  if (positionals.length) throw new Error("usage: runplane token list [--team <id>] [--organization <name>]");
  const organization = typeof values.organization === "string" ? values.organization : DEMO.organization;
  const teamId = typeof values.team === "string" ? values.team : undefined;
  const tokens = await withServerData(env, async (runplane) => {
    if (teamId) await checkTeam(runplane, organization, teamId, true);
    else await checkOrganization(runplane, organization);
    return (await runplane.directory.listApiTokens({ organization, ...(teamId ? { teamId } : {}) })).items;
  });
  if (tokens.length === 0) out(`no API tokens in organization ${organization}${teamId ? ` for team ${teamId}` : ""}`);
  for (const t of tokens) out(`${t.id}  ${ownerOf(t)}  created ${t.createdAt}  last used ${t.lastUsedAt ?? "never"}  ${JSON.stringify(t.description)}`);
}

/** `revoke <token id>`: the API token is refused from the server's next request on. */
async function revoke(args: string[], out: (line: string) => void): Promise<void> {
  const { positionals, env } = parse(args, {}, DATA_FLAGS);
  if (positionals.length !== 1) throw new Error("usage: runplane token revoke <token id>");
  // A whole token (`<id>.<secret>`) pasted in place of its id names its id; the secret is never repeated.
  const id = positionals[0]!.split(".")[0]!;
  const revoked = await withServerData(env, async (runplane, store) => {
    const view = await runplane.directory.getApiToken(id);
    if (!view || !(await revokeToken(runplane, store.storage, id))) {
      throw new Error(`API token ${id} not found (or already revoked): \`runplane token list\` shows the ids (agent tokens are revoked with DELETE /api/v2/authentication-tokens/<id>)`);
    }
    return view;
  });
  out(`revoked ${revoked.id} (${ownerOf(revoked)}, ${JSON.stringify(revoked.description)}): refused from the next request on`);
}

/** Who a token acts as: its team's id, or its user, or the organization. */
const ownerOf = (t: ApiTokenView): string => (t.kind === "team" ? (t.teamId ?? "team ?") : t.kind === "user" ? `user ${t.userId ?? "?"}` : "organization");

// The organization first: a missing one is what the caller has to fix, not its team.
async function checkOrganization(runplane: Runplane, organization: string): Promise<void> {
  if (await runplane.directory.organizations.get(organization)) return;
  throw new Error(
    `organization ${organization} not found: the reference server has organization ${DEMO.organization} (use --organization ${DEMO.organization}, or leave it out); ` +
      "other organizations are created by a program embedding runplane, with directory.organizations.create(...)",
  );
}

async function checkTeam(runplane: Runplane, organization: string, teamId: string, named: boolean): Promise<void> {
  await checkOrganization(runplane, organization);
  const team = await runplane.directory.teams.get(teamId);
  if (team && team.organization === organization) return;
  throw new Error(`team ${teamId} not found in organization ${organization}: pass --team <id> with the id of one of its teams${named ? "" : " (its owners team acts as owners)"}`);
}
