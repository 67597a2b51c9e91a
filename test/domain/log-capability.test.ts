import { describe, expect, it } from "vitest";
import { redactLogCapabilities, signLogCapability, verifyLogCapability } from "../../src/domain/log-capability.js";
import { responseExcerpt } from "../../src/domain/response-excerpt.js";
import { createKeyring } from "../../src/index.js";

/** decision D32: the capability a `log-read-url` carries, signed and checked as pure functions. */

const KEY = new Uint8Array(32).fill(7);
const OTHER = new Uint8Array(32).fill(9);
const claims = { runId: "run-AAAAAAAAAAAAAAAA", kind: "plan" as const, expiresAt: 1_767_229_200 };

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Every other spelling of base64url `part` that Node's decoder reads as the same bytes (its last character's spare bits). */
const otherSpellings = (part: string): string[] =>
  [...ALPHABET]
    .map((c) => `${part.slice(0, -1)}${c}`)
    .filter((other) => other !== part && Buffer.from(other, "base64url").equals(Buffer.from(part, "base64url")));

describe("log capability", () => {
  it("signs a known answer and verifies it with any of the keys given, until it expires", () => {
    const capability = signLogCapability(claims, KEY);
    // Known answer (computed independently with Python hmac): every host of a cluster must agree on it.
    expect(capability).toBe("rplog1.cGxhbgoxNzY3MjI5MjAwCnJ1bi1BQUFBQUFBQUFBQUFBQUFB.xxSijYCla3MfBteCIDeTZyZKIBTd7vT5ns5S5ZGTMR8");
    expect(verifyLogCapability(capability, [OTHER, KEY], claims.expiresAt - 1)).toStrictEqual({ ok: true, claims });
    expect(verifyLogCapability(capability, [OTHER], claims.expiresAt - 1)).toStrictEqual({ ok: false, reason: "forged" });
    expect(verifyLogCapability(capability, [KEY], claims.expiresAt)).toStrictEqual({ ok: false, reason: "expired" });
  });

  it("has exactly one spelling: every other base64url spelling of the same MAC or payload bytes is refused", () => {
    const capability = signLogCapability(claims, KEY);
    const [prefix, payload, tag] = capability.split(".") as [string, string, string];
    // The last character of a base64url part carries bits the decoder drops: 3 more spellings of a
    // 32-byte MAC, and more of a payload whose length leaves 4 spare bits. Each is tried, none verifies.
    const macSpellings = otherSpellings(tag);
    expect(macSpellings).toHaveLength(3);
    for (const other of macSpellings) expect(verifyLogCapability(`${prefix}.${payload}.${other}`, [KEY], claims.expiresAt - 1), other).toStrictEqual({ ok: false, reason: "forged" });
    // Run ids one and two characters longer leave 2 and 4 spare bits in the payload's last character.
    for (const runId of ["run-AAAAAAAAAAAAAAAAA", "run-AAAAAAAAAAAAAAAAAA"]) {
      const signed = signLogCapability({ ...claims, runId }, KEY);
      const [, body, mac] = signed.split(".") as [string, string, string];
      const spellings = otherSpellings(body);
      expect(spellings.length, body).toBeGreaterThan(0);
      for (const other of spellings) expect(verifyLogCapability(`${prefix}.${other}.${mac}`, [KEY], claims.expiresAt - 1).ok, other).toBe(false);
    }
  });

  it("refuses what is not a capability before computing anything", () => {
    for (const bad of ["", "rplog1", "rplog1..x", `rplog1.${"A".repeat(600)}.${"A".repeat(43)}`, "rplog2.cGxhbg.AAAA", "rplog1.a b.c"]) {
      expect(verifyLogCapability(bad, [KEY], 0), bad).toStrictEqual({ ok: false, reason: "malformed" });
    }
  });

  it("derives the same MAC keys from the same keyring keys, different ones per purpose and key", () => {
    const key = { id: "k1", key: Buffer.from(KEY).toString("base64") };
    const a = createKeyring({ keys: [key] }).macKeys!("log-read-url");
    const b = createKeyring({ keys: [{ id: "k0", key: Buffer.from(OTHER).toString("base64") }, key], active: "k1" }).macKeys!("log-read-url");
    expect(b.active).toStrictEqual(a.active);
    expect(b.all).toHaveLength(2);
    expect(b.all[0]).toStrictEqual(a.active);
    expect(createKeyring({ keys: [key] }).macKeys!("other").active).not.toStrictEqual(a.active);
    expect(a.active).not.toStrictEqual(KEY);
  });

  it("is redacted from text, and from the excerpt of an answer that echoes it", () => {
    const url = `https://runplane.example/api/v2/logs/${signLogCapability(claims, KEY)}`;
    expect(redactLogCapabilities(`GET ${url}?limit=1`)).toBe("GET https://runplane.example/api/v2/logs/[redacted]?limit=1");
    const excerpt = responseExcerpt({ body: JSON.stringify({ read: url }), contentType: "application/json", truncated: false, secrets: [] });
    expect(excerpt.text).toBe('{"read":"https://runplane.example/api/v2/logs/[redacted]"}');
  });

  it("is redacted however an echo percent- or \\u-escapes it, and only the token that holds it", () => {
    const capability = signLogCapability(claims, KEY);
    const [prefix, payload, mac] = capability.split(".") as [string, string, string];
    const spellings = [
      `${prefix}%2E${payload}%2e${mac}`,
      `%72${prefix.slice(1)}.${payload}.${mac}`,
      [...capability].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`).join(""),
      `${prefix}\\u002e${payload}\\u002E${mac}`,
    ];
    for (const spelling of spellings) {
      const text = `dots=${spelling}&next=kept words`;
      expect(redactLogCapabilities(text), spelling).toBe("dots=[redacted]&next=kept words");
      const excerpt = responseExcerpt({ body: text, contentType: "text/plain", truncated: false, secrets: [] });
      expect(excerpt.text, spelling).not.toContain(mac.slice(0, 12));
    }
  });
});
