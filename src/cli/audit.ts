import type { AuditVerification } from "../services/audit-trail.js";
import { DATA_FLAGS, parse } from "./args.js";
import { withServerData } from "./open.js";

const USAGE = "usage: runplane audit verify [--organization <name>] (runplane audit --help for its flags)";

/**
 * `runplane audit verify [--organization <name>]` (decision D53): walks each organization's hash
 * chain in the server's data and names the first break (an edited row, a deleted one, a row linked
 * to the wrong predecessor, newest rows gone). Prints each chain's head digest, to keep where the
 * database's writers cannot reach. Exit 1 when any chain is broken.
 */
export async function audit(args: string[], out: (line: string) => void): Promise<boolean> {
  const [subcommand, ...rest] = args;
  if (subcommand !== "verify") throw new Error(subcommand === undefined ? USAGE : `unknown subcommand ${subcommand}; ${USAGE}`);
  const { values, env } = parse(rest, { organization: { type: "string" } }, DATA_FLAGS);
  const organization = typeof values.organization === "string" ? values.organization : undefined;
  return withServerData(env, async (runplane) => {
    const results = await runplane.audit.verify(organization);
    if (results.length === 0) out("no audit events");
    for (const result of results) out(describe(result));
    return results.every((r) => r.broken === null);
  }, { keyring: false });
}

const WHY = {
  edited: "its content does not match its digest (the row was edited)",
  missing: "it is missing (the row was deleted)",
  relinked: "it does not link to the event before it (rows were replaced or reordered)",
  "head-mismatch": "the chain ends before its recorded head (the newest rows were deleted or rewritten)",
} as const;

function describe(r: AuditVerification): string {
  if (r.broken) return `${r.organization}: BROKEN at event ${r.broken.seq}: ${WHY[r.broken.reason]}; ${r.events} event${r.events === 1 ? "" : "s"} before it verified`;
  if (r.headDigest === null) return `${r.organization}: no audit events`;
  return `${r.organization}: ${r.events} event${r.events === 1 ? "" : "s"} verified, head ${r.headDigest}`;
}
