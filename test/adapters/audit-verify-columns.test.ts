import { expect } from "vitest";
import type { Storage } from "../../src/storage/types.js";
import { auditEvent, walkChain } from "../../src/testing/conformance/audit-fixtures.js";
import { onTamperedTrail, type RawSql } from "../helpers/tampered-trail.js";

// Found from outside (an auditor): the `at`, `id` and `seq` columns are not covered by any digest,
// and `since` finds its first event by the `at` column: an edited column could hide events from an
// auditor's `since` query while verify passed. Verify now checks each row's columns against its body.
async function columnsEdited(storage: Storage, exec: RawSql) {
  for (let n = 1; n <= 4; n++) await storage.audit!.append(auditEvent(n));
  for (let n = 1; n <= 2; n++) await storage.audit!.append(auditEvent(n, { organization: "globex" }));
  for (let n = 1; n <= 2; n++) await storage.audit!.append(auditEvent(n, { organization: "initech" }));
  expect(await walkChain(storage.audit!, "acme")).toBeNull();
  await exec(`UPDATE audit_events SET at = at + 86400000 WHERE organization = 'acme' AND seq = 2`);
  await exec(`UPDATE audit_events SET id = 'not-its-id' WHERE organization = 'globex' AND seq = 2`);
  await exec(`UPDATE audit_events SET at = at - 5000 WHERE organization = 'initech' AND seq = 1`);
  expect(await walkChain(storage.audit!, "acme")).toStrictEqual({ seq: 2, reason: "edited" });
  expect(await walkChain(storage.audit!, "globex")).toStrictEqual({ seq: 2, reason: "edited" });
  expect(await walkChain(storage.audit!, "initech")).toStrictEqual({ seq: 1, reason: "edited" });
  // Found from outside: a body that is not an event's JSON stopped verify with a bare parse error.
  for (let n = 1; n <= 3; n++) await storage.audit!.append(auditEvent(n, { organization: "umbrella" }));
  await exec(`UPDATE audit_events SET body = '{"seq":' WHERE organization = 'umbrella' AND seq = 2`);
  expect(await walkChain(storage.audit!, "umbrella")).toStrictEqual({ seq: 2, reason: "edited" });
  await exec(`UPDATE audit_events SET body = 'null' WHERE organization = 'umbrella' AND seq = 2`);
  expect(await walkChain(storage.audit!, "umbrella")).toStrictEqual({ seq: 2, reason: "edited" });
  // Found from outside: one organization's whole trail copied over another's verified clean.
  for (let n = 1; n <= 2; n++) await storage.audit!.append(auditEvent(n, { organization: "hooli" }));
  await exec(`DELETE FROM audit_events WHERE organization = 'initech'; UPDATE audit_events SET organization = 'initech' WHERE organization = 'hooli'`);
  await exec(`UPDATE audit_heads SET seq = (SELECT seq FROM audit_heads WHERE organization = 'hooli'), digest = (SELECT digest FROM audit_heads WHERE organization = 'hooli'), at = (SELECT at FROM audit_heads WHERE organization = 'hooli') WHERE organization = 'initech'`);
  expect(await walkChain(storage.audit!, "initech")).toStrictEqual({ seq: 1, reason: "moved" });
}

await onTamperedTrail("verify checks the columns beside the digested body", "names a row whose columns or body were edited, and another organization's event", columnsEdited);
