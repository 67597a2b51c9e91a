import type { AuditVerification } from "../services/audit-trail.js";
import { DATA_FLAGS, parse } from "./args.js";
import { withServerData } from "./open.js";

const USAGE = "usage: runplane audit verify [--organization <name> [--expect-head <digest>]] (runplane audit --help for its flags)";

/**
 * `runplane audit verify [--organization <name>]` (decision D53): walks each organization's hash
 * chain in the server's data and names the first break (an edited row, a deleted one, a row linked
 * to the wrong predecessor, newest rows gone). Prints each chain's head digest, to keep where the
 * database's writers cannot reach, and `--expect-head` checks such a kept digest is still in the
 * chain (a chain rewritten whole links again; only an outside copy tells). Exit 1 when any chain is
 * broken, a kept head is missing, or the organization named has no trail (a misspelt name must not
 * pass as verified).
 */
export async function audit(args: string[], out: (line: string) => void): Promise<boolean> {
  const [subcommand, ...rest] = args;
  if (subcommand !== "verify") throw new Error(subcommand === undefined ? USAGE : `unknown subcommand ${subcommand}; ${USAGE}`);
  const { values, env } = parse(rest, { organization: { type: "string" }, "expect-head": { type: "string" } }, DATA_FLAGS);
  const organization = typeof values.organization === "string" ? values.organization : undefined;
  const expect = typeof values["expect-head"] === "string" ? values["expect-head"] : undefined;
  if (expect !== undefined && (organization === undefined || !/^[0-9a-f]{64}$/.test(expect))) throw new Error(`--expect-head takes a head digest (64 hex characters) printed by an earlier verify, with --organization; ${USAGE}`);
  return withServerData(env, async (runplane) => {
    const results = await runplane.audit.verify(organization, expect === undefined ? {} : { expect });
    if (results.length === 0) out("no audit events");
    for (const result of results) out(describe(result));
    if (organization !== undefined && results[0]?.headDigest === null && results[0].broken === null) {
      out(`no organization named ${JSON.stringify(organization)} has a trail here (run without --organization to list those that have one)`);
      return false;
    }
    return results.every((r) => r.broken === null && r.expected?.seq !== null);
  }, { keyring: false });
}

const WHY = {
  edited: "its content does not match its digest (the row was edited)",
  missing: "it is missing (the row was deleted)",
  relinked: "one of the two was rewritten with a fresh digest, or rows were replaced or reordered",
  "head-mismatch": "the chain ends before its recorded head (the newest rows were deleted or rewritten)",
  moved: "it is another organization's event (rows were copied or moved between trails)",
  "no-head": "its events are stored but its head row is missing (the head was deleted: every read of the trail shows it empty)",
  "no-trail": "the organization exists but has no trail (its events and head were deleted, or it was created before runplane recorded organizations and has had no recorded change since)",
} as const;

function describe(r: AuditVerification): string {
  if (r.expected?.seq === null && r.headDigest !== null && !r.broken) return `${r.organization}: BROKEN: the head kept elsewhere (${r.expected.digest}) is not in the chain (the chain was rewritten, or pruned past it); ${r.events} event${r.events === 1 ? "" : "s"} otherwise verified`;
  // A link that does not hold says nothing of which side changed: both rows may have been rewritten.
  if (r.broken?.reason === "relinked") {
    const { seq } = r.broken;
    const before = Math.max(0, r.events - 1);
    return `${r.organization}: BROKEN between events ${seq - 1} and ${seq}: event ${seq} does not link to event ${seq - 1} (${WHY.relinked}); ${before} event${before === 1 ? "" : "s"} before them verified`;
  }
  if (r.broken?.reason === "no-trail") return `${r.organization}: BROKEN: ${WHY["no-trail"]}`;
  if (r.broken) return `${r.organization}: BROKEN at event ${r.broken.seq}: ${WHY[r.broken.reason]}; ${r.events} event${r.events === 1 ? "" : "s"} before it verified`;
  if (r.headDigest === null) return `${r.organization}: no audit events`;
  const kept = r.expected?.seq ? `, the head kept elsewhere is event ${r.expected.seq}` : "";
  // Named, so a prefix deleted and passed off as retention shows (found from outside).
  const pruned = r.pruned > 0 ? ` (events 1-${r.pruned} pruned)` : "";
  return `${r.organization}: ${r.events} event${r.events === 1 ? "" : "s"} verified${pruned}, head ${r.headDigest}${kept}`;
}
