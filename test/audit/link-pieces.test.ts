import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../src/schemas/audit.js";
import { canonicalJson, digestOfText, EMPTY_HEAD, linkEvent, linkPieces } from "../../src/storage/audit-chain.js";
import { auditEvent } from "../../src/testing/conformance/audit.cases.js";

// decision D59: the SQL adapters link an event in its one insert: the database joins linkPieces'
// pieces around the head's values and digests the text. Joined here the same way, the pieces must
// give linkEvent's text byte for byte, or `runplane audit verify` would call every row edited.
describe("linkPieces", () => {
  const head = { ...EMPTY_HEAD, seq: 41, digest: "ab".repeat(32), at: Date.UTC(2026, 0, 1) + 7000 };
  const joined = (pieces: string[], at: number, prev: string, seq: number) => `${pieces[0]}${at}${pieces[1]}${prev}${pieces[2]}${seq}${pieces[3]}`;

  it.each([
    ["a plain event", auditEvent(3)],
    ["an event whose objects list their keys in sorted order (canonicalJson's fast path)", JSON.parse(canonicalJson(auditEvent(3))) as AuditEvent],
    ["an event whose time is before the head's", auditEvent(1)],
    ["values that look like the keys the database fills in", auditEvent(9, { action: '"prev":"0","seq":1,"at":2', changes: [{ field: '"seq":', old: "}{", new: 1.5 }] })],
    ["other scripts and escapes", auditEvent(9, { resource: { type: "v\u00e9r \u4e2d \ud83d\udd11", id: 'a\\"b\n\u2028' } })],
  ])("joined around the linked at, prev and seq, are linkEvent's text: %s", (_what, event) => {
    const { entry, text } = linkEvent(event, head);
    expect(joined(linkPieces(event), entry.at, entry.prev, entry.seq)).toBe(text);
    expect(digestOfText(text)).toBe(entry.digest);
  });
});
