import { DEMO, seedDemoOwners } from "../../examples/server/demo.js";
import { revokeToken } from "../../examples/server/owners-token.js";
import type { Runplane } from "../index.js";
import type { ApiTokenView } from "../services/directory.js";
import { REVOKED_TOKEN_DESCRIPTION, sessionOf } from "../services/principals.js";
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
    // A database the server never started on (only migrated) gets the records a token needs; the
    // demo itself is seeded by the server's first start (D52).
    await store.exclusively(() => seedDemoOwners(runplane));
    await checkTeam(runplane, organization, teamId, typeof values.team === "string");
    return (await runplane.directory.createApiToken({ organization, kind: "team", teamId, description })).token;
  });
  out(secret);
}

/** What a listed record is: a token, a results page session, or the record of a revoked token. */
type Kind = "token" | "session" | "revoked";
const kindOf = (t: ApiTokenView): Kind => (sessionOf(t) ? "session" : t.description === REVOKED_TOKEN_DESCRIPTION ? "revoked" : "token");

/**
 * `list [--team <id>] [--organization <name>] [--sessions] [--revoked]`: one line per token,
 * oldest first, never a secret. Sessions (results page sign-ins) and the records that keep a
 * revoked ADMIN_TOKEN revoked are stored as token records but are no credential an operator uses
 * or revokes: they are listed, labelled, only on request, and a last line counts those left out.
 */
async function list(args: string[], out: (line: string) => void): Promise<void> {
  const { values, positionals, env } = parse(args, { team: TEAM, organization: ORGANIZATION, sessions: { type: "boolean" }, revoked: { type: "boolean" } }, DATA_FLAGS);
  if (positionals.length) throw new Error("usage: runplane token list [--team <id>] [--organization <name>] [--sessions] [--revoked]");
  const organization = typeof values.organization === "string" ? values.organization : DEMO.organization;
  const teamId = typeof values.team === "string" ? values.team : undefined;
  const records = await withServerData(env, async (runplane) => {
    if (teamId) await checkTeam(runplane, organization, teamId, true);
    else await checkOrganization(runplane, organization);
    return (await runplane.directory.listApiTokens({ organization, ...(teamId ? { teamId } : {}) })).items;
  });
  const shown: Record<Kind, boolean> = { token: true, session: values.sessions === true, revoked: values.revoked === true };
  const listed = records.filter((t) => shown[kindOf(t)]);
  if (!records.some((t) => kindOf(t) === "token")) out(`no API tokens in organization ${organization}${teamId ? ` for team ${teamId}` : ""}`);
  for (const t of listed) out(lineOf(t));
  const hidden = (kind: Kind) => records.filter((t) => kindOf(t) === kind).length;
  const notShown = [
    ...(shown.session || hidden("session") === 0 ? [] : [`${hidden("session")} results page session${hidden("session") === 1 ? "" : "s"}, --sessions`]),
    ...(shown.revoked || hidden("revoked") === 0 ? [] : [`${hidden("revoked")} revoked-token record${hidden("revoked") === 1 ? "" : "s"}, --revoked`]),
  ];
  if (notShown.length > 0) out(`(not shown: ${notShown.join("; ")})`);
}

function lineOf(t: ApiTokenView): string {
  const common = `${t.id}  ${ownerOf(t)}  created ${t.createdAt}`;
  const lastUsed = `last used ${t.lastUsedAt ?? "never"}`;
  const kind = kindOf(t);
  if (kind === "session") return `session  ${common}  ${lastUsed}  ${t.description}`;
  if (kind === "revoked") return `revoked  ${common}  a revoked ADMIN_TOKEN, kept so that no host brings it back; never a credential`;
  return `${common}  ${lastUsed}  ${JSON.stringify(t.description)}`;
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
