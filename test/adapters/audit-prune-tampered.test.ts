import { expect } from "vitest";
import type { Storage } from "../../src/storage/types.js";
import { auditEvent, T0, walkChain } from "../../src/testing/conformance/audit-fixtures.js";
import { onTamperedTrail, type RawSql } from "../helpers/tampered-trail.js";

// Found from outside (an auditor): the `at` column is not covered by any digest, and pruning read
// it, so setting it back on recent rows had the sweeper remove them, and verify passed. Pruning now
// reads the digested body's time and removes only rows that match their digest.
async function tamperedThenPruned(storage: Storage, exec: RawSql) {
  for (let n = 1; n <= 6; n++) await storage.audit!.append(auditEvent(n)); // T0 + 1 s ... T0 + 6 s
  // Columns only: events 3-6 claim to be from 1970.
  await exec(`UPDATE audit_events SET at = 1000 WHERE organization = 'acme' AND seq >= 3`);
  expect(await storage.audit!.prune(T0 + 2500, 100)).toBe(2); // events 1 and 2 are older than the cut; 3-6 are not, whatever the column says
  expect((await storage.audit!.list("acme", { offset: 0, limit: 10 })).items.map((e) => e.seq)).toStrictEqual([3, 4, 5, 6]);
  // A body edited to look old: pruning stops before it, and verify names it.
  await exec(`UPDATE audit_events SET body = replace(body, '"at":${T0 + 4000}', '"at":1000') WHERE organization = 'acme' AND seq = 4`);
  expect(await storage.audit!.prune(T0 + 5500, 100)).toBe(1); // event 3 only: 4 does not match its digest
  expect((await storage.audit!.list("acme", { offset: 0, limit: 10 })).items.map((e) => e.seq)).toStrictEqual([4, 5, 6]);
  expect(await walkChain(storage.audit!, "acme")).toStrictEqual({ seq: 4, reason: "edited" });
}

await onTamperedTrail("pruning a tampered trail", "goes by the digested time, and never removes an edited row", tamperedThenPruned);
