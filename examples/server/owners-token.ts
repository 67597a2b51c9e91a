import { sha256Hex } from "../../src/crypto/random.js";
import type { Runplane } from "../../src/index.js";
import { REVOKED_TOKEN_DESCRIPTION } from "../../src/services/principals.js";
import type { Storage } from "../../src/storage/types.js";
import { DEMO } from "./demo.js";
import type { DataDir } from "./state.js";

/** The description that marks the owners team's ADMIN_TOKEN record. */
export const ADMIN_TOKEN_DESCRIPTION = "ADMIN_TOKEN";

/** A token a start revoked: an ADMIN_TOKEN the environment no longer sets, or the token this DATA_DIR printed last. */
export interface RevokedToken {
  id: string;
  was: "ADMIN_TOKEN" | "printed";
}

export interface OwnersToken {
  token: string;
  fromEnv: boolean;
  revoked: RevokedToken[];
}

/**
 * The reference server's owners token. With `adminToken` (ADMIN_TOKEN) every host
 * uses that one token: the first start stores its digest under the description ADMIN_TOKEN, later
 * starts with the same value (of this host or any other sharing the database) find it and revoke
 * nothing of it, so hosts never lock each other out. A start with another value, or without
 * ADMIN_TOKEN, revokes the ADMIN_TOKEN records the environment no longer names: the last start
 * wins. Without ADMIN_TOKEN a start issues a fresh token to print; either way the token this
 * DATA_DIR printed at its previous start is revoked, so "revoked at next start" holds. Run it
 * inside the storage's startup lock: two hosts then never both create the ADMIN_TOKEN record.
 */
export async function ownersToken(runplane: Runplane, storage: Storage, dataDir: DataDir, adminToken: string | undefined): Promise<OwnersToken> {
  const { directory } = runplane;
  const owners = { organization: DEMO.organization, kind: "team", teamId: DEMO.ownersTeam } as const;
  const revoked: RevokedToken[] = [];
  let token: string;
  let keep: string;
  if (adminToken) {
    // A value revoked before (a start with another ADMIN_TOKEN, or `token revoke`) stays revoked.
    if (await directory.findApiToken(revokedMark(sha256Hex(adminToken)))) throw new Error(ADMIN_TOKEN_REVOKED);
    const found = await directory.findApiToken(adminToken);
    keep = found?.id ?? (await directory.createApiToken({ ...owners, secret: adminToken, description: ADMIN_TOKEN_DESCRIPTION })).id;
    token = adminToken;
  } else {
    const issued = await directory.createApiToken({ ...owners, description: "reference server" });
    ({ id: keep, token } = issued);
  }
  // The new token exists before any old one goes: a start that fails halfway locks nobody out.
  const listed = await directory.listApiTokens({ organization: owners.organization, teamId: owners.teamId });
  for (const old of listed.items) {
    if (old.description !== ADMIN_TOKEN_DESCRIPTION || old.id === keep) continue;
    if (await revokeToken(runplane, storage, old.id)) revoked.push({ id: old.id, was: "ADMIN_TOKEN" });
  }
  const previous = dataDir.lastTokenId();
  if (previous && previous !== keep && (await directory.revokeApiToken(previous))) revoked.push({ id: previous, was: "printed" });
  if (adminToken) dataDir.forgetTokenId();
  else dataDir.rememberTokenId(keep);
  return { token, fromEnv: Boolean(adminToken), revoked };
}

/** What the banner says a start revoked: `revoked the previous ADMIN_TOKEN, id at-...`, or "". */
export function describeRevoked(revoked: readonly RevokedToken[]): string {
  if (revoked.length === 0) return "";
  const what = (r: RevokedToken) => (r.was === "ADMIN_TOKEN" ? `the previous ADMIN_TOKEN, id ${r.id}` : `the token the previous start printed, id ${r.id}`);
  return `revoked ${revoked.map(what).join("; ")}`;
}

const ADMIN_TOKEN_REVOKED =
  "ADMIN_TOKEN was revoked (a host started with another ADMIN_TOKEN, or `runplane token revoke`): start this host with the ADMIN_TOKEN the others use now";

/** The secret of the record that remembers a revoked ADMIN_TOKEN by its digest; no bearer is ever this. */
const revokedMark = (digest: string): string => `revoked ADMIN_TOKEN ${digest}`;

/**
 * Revokes API token `id`; an ADMIN_TOKEN is also remembered as revoked (a record that is never a
 * credential, keyed by its digest), so that no host restarting with the old value brings it back.
 * False when there is no such token.
 */
export async function revokeToken(runplane: Runplane, storage: Storage, id: string): Promise<boolean> {
  const record = await storage.apiTokens.get(id);
  if (!record) return false;
  if (record.description === ADMIN_TOKEN_DESCRIPTION && !(await runplane.directory.findApiToken(revokedMark(record.digest)))) {
    const { organization, kind } = record;
    const owner = { ...(record.teamId === null ? {} : { teamId: record.teamId }), ...(record.userId === null ? {} : { userId: record.userId }) };
    await runplane.directory.createApiToken({ organization, kind, ...owner, secret: revokedMark(record.digest), description: REVOKED_TOKEN_DESCRIPTION });
  }
  return runplane.directory.revokeApiToken(id);
}
