/**
 * Every spelling of a secret that an echo may carry (decisions D31, D38, D42), to be found in the
 * folded view of an answer (fold.ts). The fold undoes escapes (percent, `\u`, `\x`, HTML
 * references), so an escape outside anything needs no spelling here; what it cannot undo are the
 * byte encodings, hex and base64 (any alignment, either alphabet), so those are spelled here, over
 * the secret and over each encoding of it: every pair of the codecs the redaction knows. Pure.
 */

import { dropSeparatorsOf, foldForm } from "./fold.js";

/** Lower case for ASCII letters only: the length, and so every position, stays. */
export const asciiLower = (text: string): string => (/[A-Z]/.test(text) ? text.replace(/[A-Z]+/g, (run) => run.toLowerCase()) : text);

const hexOf = (bytes: Buffer): string => bytes.toString("hex");
const each = (text: string, format: (code: number) => string): string => [...text].map((ch) => format(ch.codePointAt(0)!)).join("");
const eachByte = (text: string, format: (hex: string) => string): string => (hexOf(Buffer.from(text, "utf8")).match(/../g) ?? []).map(format).join("");
const eachUnit = (text: string, format: (hex: string) => string): string =>
  Array.from({ length: text.length }, (_, i) => format(text.charCodeAt(i).toString(16).padStart(4, "0"))).join("");

/**
 * base64 of `text` without its last character when that one also carries bits of what follows, and
 * without padding: the same whether the text ends the blob or not, padded or not.
 */
const stableBase64 = (text: string, alphabet: "base64" | "base64url"): string => {
  const bytes = Buffer.from(text, "utf8");
  return bytes.toString(alphabet).slice(0, Math.floor((bytes.length * 8) / 6));
};

/** HTML's names for the ASCII characters that have one (the first of each, as encoders write them). */
const HTML_NAMES: Record<string, string> = {
  "!": "excl", '"': "quot", "#": "num", $: "dollar", "%": "percnt", "&": "amp", "'": "apos", "(": "lpar", ")": "rpar", "*": "ast",
  "+": "plus", ",": "comma", ".": "period", "/": "sol", ":": "colon", ";": "semi", "<": "lt", "=": "equals", ">": "gt", "?": "quest",
  "@": "commat", "[": "lbrack", "\\": "bsol", "]": "rbrack", "^": "Hat", _: "lowbar", "`": "grave", "{": "lbrace", "|": "verbar", "}": "rbrace",
};

/**
 * The encodings an inner layer may be, each in the spelling encoders write. `grows`: at least how
 * many characters it writes per character of the secret. `bytes`: it escapes UTF-8 bytes, which
 * the fold leaves as they are beyond ASCII, so a non-ASCII secret needs it spelled.
 */
const INNER: readonly { encode: (s: string) => string; grows: number; bytes?: true }[] = [
  { encode: (s) => s, grows: 1 },
  { encode: (s) => JSON.stringify(s).slice(1, -1), grows: 1 },
  { encode: encodeURIComponent, grows: 1, bytes: true },
  { encode: (s) => eachByte(s, (h) => `%${h.toUpperCase()}`), grows: 3, bytes: true },
  // decision D42: lower-case hex escapes too, as some encoders write them: under hex or base64 they differ.
  { encode: (s) => eachByte(s, (h) => `%${h}`), grows: 3, bytes: true },
  { encode: (s) => eachUnit(s, (h) => `\\u${h}`), grows: 6 },
  { encode: (s) => eachByte(s, (h) => `\\x${h}`), grows: 4, bytes: true },
  { encode: (s) => each(s, (c) => `&#${c};`), grows: 4 },
  { encode: (s) => each(s, (c) => `&#x${c.toString(16)};`), grows: 5 },
  { encode: (s) => each(s, (c) => `&#x${c.toString(16).toUpperCase()};`), grows: 5 },
  { encode: (s) => [...s].map((ch) => (HTML_NAMES[ch] ? `&${HTML_NAMES[ch]};` : ch)).join(""), grows: 1 },
  // decision D42: the other names a reader takes for a token's `-` and `_` (U+2010, U+2212 for `-`).
  { encode: (s) => s.replace(/-/g, "&hyphen;").replace(/_/g, "&UnderBar;"), grows: 1 },
  { encode: (s) => s.replace(/-/g, "&dash;"), grows: 1 },
  { encode: (s) => s.replace(/-/g, "&minus;"), grows: 1 },
  { encode: (s) => hexOf(Buffer.from(s, "utf8")), grows: 2 },
  { encode: (s) => hexOf(Buffer.from(s, "utf8")).toUpperCase(), grows: 2 },
  { encode: (s) => stableBase64(s, "base64"), grows: 4 / 3 },
  { encode: (s) => stableBase64(s, "base64url"), grows: 4 / 3 },
];

/** The base64 characters that depend on `bytes` alone when they start `offset` bytes into a run. */
function base64Core(bytes: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
  return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}

/** base64 and base64url of `bytes` at the three alignments a larger blob may put them. */
function base64Forms(bytes: Buffer, forms: Set<string>): void {
  for (let offset = 0; offset < 3; offset++) {
    const core = base64Core(bytes, offset);
    // Folded: base64's `+`, `/` and base64url's `-`, `_` are separators, so both alphabets fold alike.
    forms.add(dropSeparatorsOf(core));
  }
}

/** Whole bytes of hex, at least 8 of them: the signature header (decision D38), or any such secret. */
const HEX_BYTES = /^(?:[0-9a-f]{2}){8,}$/i;

/**
 * decision D38: the bytes a hex secret spells, as an echo that decoded the hex may spell them:
 * base64 at any alignment, every byte `%`- or `\u`-escaped, and `0x`/`\x` per byte. Their hex,
 * with or without separators between bytes, is the secret itself.
 */
function byteForms(hex: string, forms: Set<string>): void {
  const bytes = Buffer.from(hex, "hex");
  const pairs = hex.toLowerCase().match(/../g) ?? [];
  const per = (format: (pair: string) => string) => pairs.map(format).join("");
  base64Forms(bytes, forms);
  for (const form of [per((p) => `%${p}`), per((p) => `\\u00${p}`), per((p) => `0x${p}`), per((p) => `\\x${p}`)]) forms.add(foldForm(form));
}

/**
 * Every spelling of `secret` an echo may carry, folded (fold.ts) and in ASCII lower case (matched
 * without regard to case), but none longer than `within`
 * folded characters could need (an answer shorter than a spelling cannot hold it: most answers are
 * short, so most spellings are never built). A text encoding folds back to the secret itself,
 * unless it escapes bytes beyond ASCII.
 */
export function secretForms(secret: string, within = Infinity): string[] {
  // A result's retries carry the same token and signature, a task's every request its key: their
  // spellings are kept (a bounded memo; more spellings than an answer needs only cost searches).
  const known = MEMO.get(secret);
  if (known && known.within >= within) return known.forms;
  const forms = spell(secret, within).map(asciiLower);
  if (MEMO.size >= MEMO_SIZE) MEMO.clear();
  MEMO.set(secret, { within, forms });
  return forms;
}

const MEMO_SIZE = 256;
const MEMO = new Map<string, { within: number; forms: string[] }>();

function spell(secret: string, within: number): string[] {
  // decision D42: written backwards too (found from outside), a reader undoes it at a glance.
  const forms = new Set([foldForm(secret), foldForm([...secret].reverse().join(""))]);
  const ascii = /^[\x00-\x7f]*$/.test(secret);
  // The shortest byte spelling of an encoding: its base64, which folds to no less than half its length.
  const fits = (grows: number): boolean => Math.floor((secret.length * grows * 4) / 3) - 2 <= within * 2;
  for (const { encode, grows, bytes: escapesBytes } of INNER) {
    if (!fits(grows) && (ascii || !escapesBytes)) continue;
    const text = encode(secret);
    if (escapesBytes && !ascii) forms.add(foldForm(text));
    const bytes = Buffer.from(text, "utf8");
    if (bytes.length * 2 <= within) forms.add(hexOf(bytes));
    // A base64 spelling folds to no less than half its length (its `+`, `/`, `-`, `_` dropped).
    if (Math.floor((bytes.length * 4) / 3) - 2 <= within * 2) base64Forms(bytes, forms);
  }
  if (HEX_BYTES.test(secret) && secret.length / 2 <= within) byteForms(secret, forms);
  return [...forms];
}
