import { describe, expect, it } from "vitest";
import { REDACTED, responseExcerpt, secretForms } from "../../src/domain/response-excerpt.js";

const TOKEN = "q0Zx-9_ZqW1bP4y7RkT2mV8sN3cL6hJ5dF0gA1eB2iC";
const KEY = 'hmac key with "quotes" & ünïcode';
const SIGNATURE = "a3f1".repeat(32);
const SECRETS = [TOKEN, KEY, SIGNATURE];
const json = "application/json";
const bytes = (s: string): number => Buffer.byteLength(s, "utf8");

const excerpt = (body: string, more: { contentType?: string; truncated?: boolean; secrets?: string[] } = {}) =>
  responseExcerpt({ body, contentType: "contentType" in more ? more.contentType : json, truncated: more.truncated ?? false, secrets: more.secrets ?? SECRETS });

/** Whether any recognisable piece of `secret` (8 characters of one of its forms) is still in `text`. */
const leaks = (text: string, secret: string): boolean =>
  secretForms(secret).some((form) => Array.from({ length: form.length - 7 }, (_, i) => form.slice(i, i + 8)).some((piece) => text.toLowerCase().includes(piece.toLowerCase())));

describe("response excerpt (D31)", () => {
  it("redacts the access token, the HMAC key and the signature as sent and JSON- or URL-escaped", () => {
    const body = JSON.stringify({ access_token: TOKEN, key: KEY, headers: { "x-tfc-task-signature": SIGNATURE.toUpperCase() }, query: `k=${encodeURIComponent(KEY)}` });
    const { text } = excerpt(body);
    for (const secret of SECRETS) expect(leaks(text!, secret), secret).toBe(false);
    expect(text).toContain(`"access_token":"${REDACTED}"`);
  });

  it("redacts them hex-encoded and base64-encoded at every alignment, inside a larger blob too", () => {
    for (const pad of ["", "x", "xy"]) {
      const blob = Buffer.from(`${pad}{"access_token":"${TOKEN}","hmac":"${KEY}"}`).toString("base64");
      const text = excerpt(JSON.stringify({ echo: blob, url: blob.replace(/\+/g, "-").replace(/\//g, "_"), hex: Buffer.from(TOKEN + KEY).toString("hex") })).text!;
      for (const secret of [TOKEN, KEY]) expect(leaks(text, secret), `${secret} after ${pad.length}`).toBe(false);
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
    expect(excerpt("a\u0000b\u001b[31mred\r\n\tc\u202Ed\u0085e\u2028f", { contentType: "text/plain" }).text).toBe("ab[31mred\n\tcdef");
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
    expect(leaks(text, TOKEN)).toBe(false);
    const capped = excerpt(`${"y".repeat(1000)}${TOKEN.slice(0, 30)}`, { contentType: "text/plain", truncated: true }).text!;
    expect(capped).not.toContain(TOKEN.slice(0, 8));
  });

  it("keeps nothing when a secret is too short to redact without giving it away", () => {
    expect(excerpt("the key was abc, try again", { secrets: [TOKEN, "abc"] }).text).toBeNull();
    expect(excerpt("nothing secret here", { secrets: [TOKEN, "abc"] }).text).toBe("nothing secret here");
  });
});
