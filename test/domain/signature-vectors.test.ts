import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { signatureHeaderValue, signPayload, verifySignature } from "../../src/domain/run-task-request.js";

// Expected digests were computed with the openssl command stored next to each vector (decision D14).
type Bytes = { utf8: string } | { hex: string } | { repeat: string; bytes: number };
interface Vector {
  name: string;
  key: { utf8: string } | { hex: string };
  body: Bytes;
  command: string;
  opensslOutput: string;
  expected: string;
}

const fixture = JSON.parse(
  readFileSync(new URL("../fixtures/hmac/vectors.json", import.meta.url), "utf8"),
) as { vectors: Vector[] };

function bytesOf(spec: Bytes): Uint8Array {
  if ("hex" in spec) return Buffer.from(spec.hex, "hex");
  if ("utf8" in spec) return Buffer.from(spec.utf8, "utf8");
  const pattern = Buffer.from(spec.repeat, "utf8");
  const out = Buffer.alloc(spec.bytes);
  for (let offset = 0; offset < spec.bytes; offset += pattern.length) pattern.copy(out, offset);
  return out;
}

const keyOf = (key: Vector["key"]): string | Uint8Array => ("hex" in key ? Buffer.from(key.hex, "hex") : key.utf8);

describe("HMAC-SHA512 known-answer vectors", () => {
  it("has at least six vectors, each with the openssl command and output it came from", () => {
    expect(fixture.vectors.length).toBeGreaterThanOrEqual(6);
    for (const vector of fixture.vectors) {
      expect(vector.command).toContain("openssl dgst -sha512");
      expect(vector.opensslOutput).toBe(`SHA2-512(stdin)= ${vector.expected}`);
      expect(vector.expected).toMatch(/^[0-9a-f]{128}$/);
    }
  });

  it("covers an empty key, a binary key, a key longer than a block and a 1 MiB body", () => {
    const keys = fixture.vectors.map((v) => keyOf(v.key));
    expect(keys.some((k) => k.length === 0)).toBe(true);
    expect(fixture.vectors.some((v) => "hex" in v.key && v.key.hex.startsWith("00"))).toBe(true);
    expect(keys.some((k) => Buffer.byteLength(k) > 128)).toBe(true);
    expect(fixture.vectors.some((v) => bytesOf(v.body).byteLength === 1024 * 1024)).toBe(true);
  });

  it("regenerates the 1 MiB body exactly as `yes | head -c` does", () => {
    const vector = fixture.vectors.find((v) => "repeat" in v.body);
    expect(vector).toBeDefined();
    const body = bytesOf(vector!.body);
    expect(body.byteLength).toBe(1_048_576);
    expect(Buffer.from(body.subarray(0, 43)).toString("utf8")).toBe("runplane run task payload 0123456789abcdef\n");
  });

  describe.each(fixture.vectors)("$name", (vector) => {
    const body = bytesOf(vector.body);
    const key = keyOf(vector.key);

    it("signs to the openssl digest", () => {
      expect(signPayload(body, key)).toBe(vector.expected);
    });

    it("verifies the openssl digest and rejects it with one hex digit changed", () => {
      expect(verifySignature(body, vector.expected, key)).toBe(true);
      const flipped = (vector.expected[0] === "0" ? "1" : "0") + vector.expected.slice(1);
      expect(verifySignature(body, flipped, key)).toBe(false);
    });
  });
});

describe("signature header", () => {
  const body = new TextEncoder().encode('{"payload_version":1}');

  it("is empty without a key and for an empty key, and the signature otherwise", () => {
    expect(signatureHeaderValue(body, null)).toBe("");
    expect(signatureHeaderValue(body, undefined)).toBe("");
    expect(signatureHeaderValue(body, "")).toBe("");
    expect(signatureHeaderValue(body, "secret")).toBe(signPayload(body, "secret"));
  });

  it("is lower-case hex", () => {
    expect(signatureHeaderValue(body, "secret")).toMatch(/^[0-9a-f]{128}$/);
  });

  it("verifies upper-case hex and surrounding whitespace, but not a missing, short or non-hex header", () => {
    const signature = signPayload(body, "secret");
    expect(verifySignature(body, signature.toUpperCase(), "secret")).toBe(true);
    expect(verifySignature(body, ` ${signature} `, "secret")).toBe(true);
    expect(verifySignature(body, "", "secret")).toBe(false);
    expect(verifySignature(body, null, "secret")).toBe(false);
    expect(verifySignature(body, signature.slice(0, 127), "secret")).toBe(false);
    expect(verifySignature(body, `${signature.slice(0, 127)}g`, "secret")).toBe(false);
  });

  it("does not verify with another key", () => {
    expect(verifySignature(body, signPayload(body, "secret"), "other")).toBe(false);
  });
});
