import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { responseExcerpt } from "../../src/domain/response-excerpt.js";
import { disguisedEchoes, leakedUndisguised } from "../helpers/secret-encodings.js";
import { leakedSignature, signatureEchoes } from "../helpers/signature-encodings.js";

// Decisions D31 and D38: the request signature is redacted from an excerpt in every encoding the
// access token and the HMAC key are, both as the header's hex text and as the digest's bytes, and
// in hex with separators between bytes; the token and the key are redacted in separated hex too.

const TOKEN = "q0Zx-9_ZqW1bP4y7RkT2mV8sN3cL6hJ5dF0gA1eB2iC";
const KEY = "correct-horse-battery-staple-42";
// Real digests: their bytes take every value, `%`, `\` and separators among them.
const SIGNATURES = ["run task request", "another payload", "{}", "a third one"].map((body) => createHmac("sha512", KEY).update(body).digest("hex"));

const excerpt = (body: string, signature: string) =>
  responseExcerpt({ body: `rejected, you sent: ${body}\nplease retry`, contentType: "text/plain", truncated: false, secrets: [TOKEN, KEY, signature] }).text!;

describe("signature redaction (D38)", () => {
  for (const [i, signature] of SIGNATURES.entries()) {
    it.each(signatureEchoes(signature).map((e) => [e.name, e.echo] as const))(`redacts %s (digest ${i + 1})`, (_, echo) => {
      const text = excerpt(echo, signature);
      expect(text).toMatch(/^rejected, you sent: .*\[redacted\].*\nplease retry$/s);
      expect(leakedSignature(text, signature)).toStrictEqual([]);
    });
  }

  const separated = (secret: string) => {
    const hex = Buffer.from(secret, "utf8").toString("hex");
    const bytes = hex.match(/../g)!;
    return [
      [`the hex of the ${secret === TOKEN ? "token" : "key"} split by spaces between bytes`, bytes.join(" ")],
      [`the upper-case hex of the ${secret === TOKEN ? "token" : "key"} split by colons`, bytes.join(":").toUpperCase()],
      [`the hex of the ${secret === TOKEN ? "token" : "key"} split by dashes`, bytes.join("-")],
    ] as const;
  };
  it.each([...separated(TOKEN), ...separated(KEY)])("redacts %s", (_, echo) => {
    const text = excerpt(echo, SIGNATURES[0]!);
    expect(text).toMatch(/^rejected, you sent: \[redacted\]\nplease retry$/);
    expect(leakedUndisguised(text, { token: TOKEN, key: KEY })).toStrictEqual([]);
  });

  it("still redacts the disguised echoes of the token and the key", () => {
    for (const { name, echo } of [...disguisedEchoes("token", TOKEN), ...disguisedEchoes("key", KEY)]) {
      expect(leakedUndisguised(excerpt(echo, SIGNATURES[0]!), { token: TOKEN, key: KEY }), name).toStrictEqual([]);
    }
  });

  it("keeps the words around a redacted signature, and an answer that does not carry it", () => {
    const signature = SIGNATURES[0]!;
    const bytes = Buffer.from(signature, "hex");
    // The last base64 character mixes the digest's last 4 bits with the padding: no leak on its own.
    expect(excerpt(`sig=${bytes.toString("base64")} was wrong`, signature)).toMatch(/^rejected, you sent: sig=\[redacted\][A-Za-z0-9+/]?=* was wrong\nplease retry$/);
    expect(excerpt("unsupported plan format version 2", signature)).toBe("rejected, you sent: unsupported plan format version 2\nplease retry");
  });
});
