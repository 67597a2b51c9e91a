import type { Runplane } from "../../src/index.js";
import { DEMO } from "./demo.js";
import type { DataDir } from "./state.js";

/**
 * The reference server's owners token. With `adminToken` (ADMIN_TOKEN) every host uses that one
 * token: the first start stores its digest, later starts (of this host or any other sharing the
 * database) find it, and nothing is revoked, so hosts starting or restarting never lock each other
 * out. Without it a start issues a fresh token to print and revokes the one this DATA_DIR printed
 * at its previous start, so exactly one printed token is valid at a time. Run it inside the
 * storage's startup lock: two hosts then never both create the ADMIN_TOKEN record.
 */
export async function ownersToken(runplane: Runplane, dataDir: DataDir, adminToken: string | undefined): Promise<{ token: string; fromEnv: boolean }> {
  const { directory } = runplane;
  const owners = { organization: DEMO.organization, kind: "team", teamId: DEMO.ownersTeam } as const;
  if (adminToken) {
    if (!(await directory.findApiToken(adminToken))) await directory.createApiToken({ ...owners, secret: adminToken, description: "ADMIN_TOKEN" });
    return { token: adminToken, fromEnv: true };
  }
  const issued = await directory.createApiToken({ ...owners, description: "reference server" });
  const previous = dataDir.lastTokenId();
  if (previous && previous !== issued.id) await directory.revokeApiToken(previous);
  dataDir.rememberTokenId(issued.id);
  return { token: issued.token, fromEnv: false };
}
