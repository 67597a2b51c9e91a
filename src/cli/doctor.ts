import { runChecks } from "../../examples/server/checks.js";
import { parse } from "./args.js";

/**
 * `runplane doctor`: runs the checks `runplane serve` runs before it starts (SERVER_CHECKS in
 * examples/server/checks.ts), with the same flags and environment, without changing anything, and
 * prints one line per check: `ok <check>: ...`, `warn <check>: ...` (it works, with a risk the
 * operator accepted), `FAIL <check>: <what to fix>`, or `--   <check>: not checked: ...` when a
 * setting it needs is wrong. Exits non-zero when a check fails.
 */
export async function doctor(args: string[], out: (line: string) => void): Promise<boolean> {
  const { env } = parse(args);
  let healthy = true;
  for (const { name, verdict } of await runChecks(env)) {
    if ("fix" in verdict) healthy = false;
    out("fix" in verdict ? `FAIL ${name}: ${verdict.fix}` : "skip" in verdict ? `--   ${name}: ${verdict.skip}` : "warn" in verdict ? `warn ${name}: ${verdict.warn}` : `ok   ${name}: ${verdict.note}`);
  }
  return healthy;
}
