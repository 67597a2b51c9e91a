import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { reloadableKeyring } from "../../examples/server/keyring-file.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";

// The operator's outside try: a malformed keyring.json gave only `the keyring source failed
// (Error)`. Node's JSON.parse may quote the file (`Unexpected token 'S', ..."key":SECRET}"... is
// not valid JSON`), so the reason is "not valid JSON" and where, never the text.

const dir = mkdtempSync(join(tmpdir(), "runplane-keyring-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const k1 = { id: "k1", key: generateKey() };
/** A key that starts with a letter: unquoted, one starting with a digit would parse as a number first, and Node then names a position. */
const secret = ((): string => {
  for (;;) {
    const key = generateKey();
    if (/^[A-Za-z]/.test(key)) return key;
  }
})();

describe("reference server keyring.json reload (D29)", () => {
  it.each([
    ["a missing comma", `{"keys":[{"id":"k1","key":"${k1.key}"},\n{"id":"k2" "key":"${secret}"}],"active":"k1"}`, "line 2, column 12"],
    ["an unquoted key", `{"keys":[{"id":"k1","key":"${k1.key}"},\n  {"id":"k2","key":${secret}}]}`, null],
    ["a file cut short", `{"keys":[{"id":"k1","key":"${k1.key}"},\n{"id":"k2","key":"${secret}"}`, "line 2, column 65"],
    ["text after the JSON", `{"keys":[{"id":"k2","key":"${secret}"}]}\n}`, "line 2, column 1"],
  ])("says a file with %s is not valid JSON, and where, without quoting it", async (_, text, where) => {
    const file = join(dir, "keyring.json");
    writeFileSync(file, `${JSON.stringify({ keys: [k1] })}\n`);
    const runplane = createRunplane({ storage: createMemoryStorage(), logger: silentLogger, host: false, keyring: reloadableKeyring({ keys: [k1] }, file) });
    writeFileSync(file, text);
    const error = (await runplane.keyring.reload().catch((e: unknown) => e)) as Error;
    expect(error.message).toBe(`the keyring source failed: ${file} is not valid JSON${where ? ` (${where})` : ""}: it must be JSON like {"keys":[{"id":"k1","key":"<32 bytes, base64>"}],"active":"k1"}: keeping the current keys`);
    expect(error.message).not.toContain(secret);
    expect(error.message).not.toContain(secret.slice(0, 8));
    expect(error.message).not.toContain(k1.key);
    expect(runplane.keyring.keyIds).toStrictEqual(["k1"]);
    await runplane.close();
  });
});
