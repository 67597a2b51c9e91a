import { describe, expect, it } from "vitest";
import { REDACTED, responseExcerpt } from "../../src/domain/response-excerpt.js";
import { disguisedEchoes, leakedSpellings, leakedUndisguised, spellings } from "../helpers/secret-encodings.js";

// An access token is base64url text (crypto/random.ts), so its base64 never holds `+` or `/`. An HMAC
// key is any text its owner chose: this one is picked so that its base64, at the three alignments,
// spells every base64 character, with `+` and `/` at each (so its base64url differs from its base64).
const TOKEN = "q0Zx-9_ZqW1bP4y7RkT2mV8sN3cL6hJ5dF0gA1eB2iC";
const KEY = 'hmac key with "quotes" & ünïcode — ¿why??? ~~~ ÆØÅ €1.';
const SIGNATURE = "a3f1".repeat(32);
const SECRETS = [TOKEN, KEY, SIGNATURE];
const NAMED = { token: TOKEN, key: KEY, signature: SIGNATURE };
const json = "application/json";
const bytes = (s: string): number => Buffer.byteLength(s, "utf8");

const excerpt = (body: string, more: { contentType?: string; truncated?: boolean; secrets?: string[] } = {}) =>
  responseExcerpt({ body, contentType: "contentType" in more ? more.contentType : json, truncated: more.truncated ?? false, secrets: more.secrets ?? SECRETS });

describe("response excerpt (D31)", () => {
  it("is checked with a key whose base64 spells every base64 character, `+` and `/` at every alignment", () => {
    const base64 = spellings("key", KEY).filter((s) => s.name.startsWith("base64 "));
    expect(base64.map((s) => [s.form.includes("+"), s.form.includes("/")])).toStrictEqual([[true, true], [true, true], [true, true]]);
    expect(new Set(base64.map((s) => s.form).join("")).size).toBe(64);
  });

  const echoes = [...spellings("token", TOKEN), ...spellings("key", KEY)].map((s) => [s.name, s.echo] as const);
  it.each(echoes)("redacts the %s that an answer echoes", (_, echo) => {
    const { text } = excerpt(`rejected, you sent: ${echo}\nplease retry`, { contentType: "text/plain" });
    expect(leakedSpellings(text!, NAMED)).toStrictEqual([]);
    expect(text).toMatch(/^rejected, you sent: .*\[redacted\].*\nplease retry$/);
  });

  it("redacts the access token, the HMAC key and the signature as sent and JSON- or URL-escaped", () => {
    const body = JSON.stringify({ access_token: TOKEN, key: KEY, headers: { "x-tfc-task-signature": SIGNATURE.toUpperCase() }, query: `k=${encodeURIComponent(KEY)}` });
    const { text } = excerpt(body);
    expect(leakedSpellings(text!, NAMED)).toStrictEqual([]);
    expect(text).toContain(`"access_token":"${REDACTED}"`);
  });

  it("redacts them hex-encoded and base64-encoded at every alignment, inside a larger blob too", () => {
    for (const pad of ["", "x", "xy"]) {
      const blob = Buffer.from(`${pad}{"access_token":"${TOKEN}","hmac":"${KEY}"}`);
      const text = excerpt(JSON.stringify({ echo: blob.toString("base64"), url: blob.toString("base64url"), hex: Buffer.from(TOKEN + KEY).toString("hex") })).text!;
      expect(leakedSpellings(text, NAMED), `after ${pad.length} bytes`).toStrictEqual([]);
    }
  });

  it("keeps at most 1 KiB, cut between characters, and says when the answer went on", () => {
    const short = excerpt("404 Bad Request: unsupported plan format version", { contentType: "text/plain" });
    expect(short).toStrictEqual({ text: "404 Bad Request: unsupported plan format version", truncated: false });
    const long = excerpt("é✓😀".repeat(500), { contentType: "text/plain; charset=utf-8" });
    expect(bytes(long.text!)).toBeLessThanOrEqual(1024);
    expect(bytes(long.text!)).toBeGreaterThan(1014);
    expect(long.truncated).toBe(true);
    expect(long.text!).not.toMatch(/[\uD800-\uDBFF]$/);
    expect(excerpt("ok", { truncated: true, secrets: [] })).toStrictEqual({ text: "ok", truncated: true });
  });

  it("removes control and bidi characters but keeps lines and tabs", () => {
    expect(excerpt("a\u0000b\u001b[31mred\r\n\tc\u202Ed\u0085e\u2028f\u061Cg", { contentType: "text/plain" }).text).toBe("ab[31mred\n\tcdefg");
  });

  it("keeps nothing of an empty, binary or undecodable answer", () => {
    expect(excerpt("")).toStrictEqual({ text: null, truncated: false });
    expect(excerpt("PNG...", { contentType: "image/png" }).text).toBeNull();
    expect(excerpt("\u0000\u0001", { contentType: "application/octet-stream" }).text).toBeNull();
    expect(excerpt("caf\uFFFD", { contentType: "text/plain" }).text).toBeNull();
    expect(excerpt("\u0007\u0008", { contentType: "text/plain" }).text).toBeNull();
    expect(excerpt("no content type, plain words", { contentType: undefined }).text).toBe("no content type, plain words");
    expect(excerpt('{"errors":[]}', { contentType: "application/vnd.api+json" }).text).toBe('{"errors":[]}');
  });

  it("never shows a secret that the read cut in two", () => {
    const body = `${"x".repeat(8192 - 20)}${TOKEN}`;
    const text = excerpt(body, { contentType: "text/plain" }).text!;
    expect(leakedSpellings(text, NAMED)).toStrictEqual([]);
    const capped = excerpt(`${"y".repeat(1000)}${TOKEN.slice(0, 30)}`, { contentType: "text/plain", truncated: true }).text!;
    expect(capped).not.toContain(TOKEN.slice(0, 8));
  });

  it("never shows the part of the signature that the egress's cap cut off, however short the other secrets are", () => {
    // The integration echoes the request's head; the 64 KiB cap ends 100 characters into the signature.
    const body = `${"accepted\n".repeat(40)}x-svc-task-signature: ${SIGNATURE.slice(0, 100)}`;
    const { text, truncated } = excerpt(body, { contentType: "text/plain", truncated: true });
    expect(truncated).toBe(true);
    expect(text).toMatch(/^(accepted\n)+/);
    expect(leakedSpellings(text!, NAMED)).toStrictEqual([]);
  });

  it("never shows part of a whole echo that the window's trim cut into, when the answer echoes the signature line after line", () => {
    // 70 lines of the signature: the 8 KiB window ends inside the 64th, and trimming a possible partial
    // secret off its end must not leave the head of the 63rd, which was whole, unredacted.
    const { text } = excerpt(`${SIGNATURE}\n`.repeat(70), { contentType: "text/plain" });
    expect(text).toMatch(/^(\[redacted\]\n)+/);
    expect(leakedSpellings(text!, NAMED)).toStrictEqual([]);
  });

  // An outside review's attack: a read-only member recovered the callback token from an echo that
  // percent-escaped every byte, and forged the result.
  const disguised = [...disguisedEchoes("token", TOKEN), ...disguisedEchoes("key", KEY), ...disguisedEchoes("signature", SIGNATURE)].map((d) => [d.name, d.echo] as const);
  it.each(disguised)("redacts %s", (_, echo) => {
    const { text } = excerpt(`rejected, you sent: ${echo}\nplease retry`, { contentType: "text/plain" });
    expect(text).toMatch(/^rejected, you sent: .*\[redacted\]/);
    expect(leakedUndisguised(text!, NAMED)).toStrictEqual([]);
  });

  // Found from outside: with a one-character HMAC key every answer showed as "no text", which read
  // as if the excerpt setting did nothing; the record now says why and what to do.
  it("keeps none of the answer when a secret is too short to redact without giving it away, and says so", () => {
    const { text } = excerpt("the key was abc, try again", { secrets: [TOKEN, "abc"] });
    expect(text).not.toContain("abc");
    expect(text).toBe("(answer not kept: it contains a secret of the request shorter than 8 characters, which cannot be redacted safely; give the run task an HMAC key of at least 8 characters)");
    expect(excerpt("nothing secret here", { secrets: [TOKEN, "abc"] }).text).toBe("nothing secret here");
  });
});
