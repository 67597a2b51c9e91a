import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signLogCapability } from "../../src/domain/log-capability.js";
import { responseExcerpt } from "../../src/domain/response-excerpt.js";

// Decisions D31, D32, D42: an answer that spells a secret of the request (the callback access
// token, the request signature) or a log capability through any codec, or any pair of codecs, keeps
// nothing of it in the stored excerpt. The codecs are written here, from their definitions, apart
// from the redaction module: dropping one there cannot drop it here. Bounded runs from a printed
// seed (REDACTION_SEED=<n> repeats one).

type Codec = [name: string, encode: (text: string) => string];
const bytesOf = (text: string): Buffer => Buffer.from(text, "utf8");
const perByte = (format: (byte: number) => string) => (text: string) => [...bytesOf(text)].map(format).join("");
const perChar = (format: (code: number) => string) => (text: string) => [...text].map((ch) => format(ch.codePointAt(0)!)).join("");
const hex2 = (n: number) => n.toString(16).padStart(2, "0");
/** HTML's own names for the characters these secrets and their encodings use (WHATWG named references). */
const NAMES: Record<string, string> = { ".": "period", "-": "", _: "lowbar", "+": "plus", "/": "sol", "=": "equals", "%": "percnt", "&": "amp", "#": "num", ";": "semi", "\\": "bsol" };

const CODECS: Codec[] = [
  ["as is", (t) => t],
  ["JSON string", (t) => JSON.stringify(t).slice(1, -1)],
  ["JSON \\u of every character", (t) => [...t].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")],
  ["URL component", encodeURIComponent],
  ["percent of every byte", perByte((b) => `%${hex2(b).toUpperCase()}`)],
  ["percent of every byte in lower case", perByte((b) => `%${hex2(b)}`)],
  ["\\x of every byte", perByte((b) => `\\x${hex2(b)}`)],
  ["hex", perByte(hex2)],
  ["upper-case hex", perByte((b) => hex2(b).toUpperCase())],
  ["base64", (t) => bytesOf(t).toString("base64")],
  ["base64url", (t) => bytesOf(t).toString("base64url")],
  ["HTML decimal references", perChar((c) => `&#${c};`)],
  ["HTML hex references", perChar((c) => `&#x${c.toString(16).toUpperCase()};`)],
  ["HTML named references", (t) => [...t].map((ch) => (NAMES[ch] ? `&${NAMES[ch]};` : ch)).join("")],
  // `&hyphen;` and `&dash;` are U+2010, which a reader takes for `-`; `&UnderBar;` is `_` too.
  ["HTML other names for - and _", (t) => t.replace(/-/g, "&hyphen;").replace(/_/g, "&UnderBar;")],
  ["HTML &dash; for -", (t) => t.replace(/-/g, "&dash;")],
  ["HTML &minus; for -", (t) => t.replace(/-/g, "&minus;")],
];
const BYTE_CODECS = new Set(["hex", "upper-case hex", "base64", "base64url"]);

/** A small seeded generator (mulberry32): the same seed, the same secrets and echoes. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = Number(process.env.REDACTION_SEED ?? Date.now() % 1_000_000);
console.log(`redaction codecs: REDACTION_SEED=${SEED}`);
const next = random(SEED);
const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256)));

/** The secrets of one run: shaped as runplane makes them (crypto/random.ts, D14, D32). */
function secrets(): Record<string, string> {
  const key = bytes(16).toString("hex");
  return {
    "callback access token": bytes(32).toString("base64url"),
    "request signature": createHmac("sha512", key).update(bytes(64)).digest("hex"),
    "log capability": signLogCapability({ runId: `run-${bytes(12).toString("base64url").replace(/[-_]/g, "x").slice(0, 16)}`, kind: "plan", expiresAt: 1_767_229_200 }, bytes(32)),
  };
}

/**
 * The characters of `encode(before + inner + after)` that depend on the secret alone: those that come
 * out the same whatever bytes stand around it (all zeros, all ones): what would give it away.
 */
function secretPart(encode: (t: string) => string, inner: string, before: number): string {
  const around = (fill: string) => encode(`${fill.repeat(before)}${inner}${fill.repeat(3)}`);
  const [a, b] = [around("\u0000"), around("\u007f")];
  return [...a].filter((ch, i) => ch === b[i]).join("").slice(0, encode(inner).length);
}

/** Every run of 8 characters of `text`. */
const eights = (text: string): string[] => Array.from({ length: Math.max(0, text.length - 7) }, (_, i) => text.slice(i, i + 8));

const RUNS = Number(process.env.REDACTION_RUNS ?? 2);

describe("redaction through every codec and every pair (D31, D32, D42)", () => {
  for (let run = 0; run < RUNS; run++) {
    it(`keeps no secret in an excerpt, whichever codec or pair of codecs spells it (run ${run + 1} of ${RUNS}, seed ${SEED})`, () => {
      const named = secrets();
      const leaked: string[] = [];
      for (const [what, secret] of Object.entries(named)) {
        const identity: Codec = ["as is", (t) => t];
        // Each codec alone (inside "as is"), then each pair: `outer` of `inner` of the secret.
        const layers: [Codec, Codec][] = CODECS.flatMap((outer) => [[outer, identity] as [Codec, Codec], ...CODECS.map((inner) => [outer, inner] as [Codec, Codec])]);
        for (const [[outerName, outerCodec], [innerName, innerCodec]] of layers) {
          const name = innerName === "as is" ? outerName : `${outerName} of ${innerName}`;
          // A byte codec outermost may start mid-group: 0 to 2 bytes of something else before the secret.
          const before = BYTE_CODECS.has(outerName) ? Math.floor(next() * 3) : 0;
          const inner = innerCodec(secret);
          const echo = outerCodec(`${"{k}".slice(0, before)}${inner}`);
          const body = `{"error":"rejected","echo":"${echo}","hint":"see the docs"}`;
          const { text, found } = responseExcerpt({ body, contentType: "application/json", truncated: false, secrets: [named["callback access token"]!, named["request signature"]!] });
          // What the echo gives away: 8 characters in a row of what in the inner encoding is the
          // secret's alone, as the outer codec spells them (a byte codec: its characters that depend on them alone).
          const core = secretPart(innerCodec, secret, 0);
          const windows = BYTE_CODECS.has(outerName)
            ? eights(secretPart(outerCodec, core, before))
            : eights(core).map(outerCodec);
          if (text === null || windows.some((w) => text.toLowerCase().includes(w.toLowerCase())) || eights(secret).some((w) => text.includes(w))) {
            leaked.push(`${name} of the ${what}: ${text}`);
          }
          else if (!text.endsWith(`","hint":"see the docs"}`) && text.length < 1000) leaked.push(`${name} of the ${what}: redacted too much: ${text}`);
          if (what === "callback access token" && !found?.includes(secret)) leaked.push(`${name} of the ${what}: not reported found`);
        }
      }
      expect(leaked.join("\n")).toBe("");
    });
  }
});
