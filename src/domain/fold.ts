/**
 * The folded view of a text (decision D31, D42): what an echo says once the escapes a reader
 * undoes by eye or by one call are undone. Each pass decodes percent escapes of ASCII (`%41`),
 * JSON `\uXXXX`, `\xXX` of ASCII, JSON's `\\`, `\"` and `\/`, and HTML character references:
 * decimal (`&#84;`), hex (`&#x54;`) and the named ones that stand for ASCII (`&period;`, `&amp;`,
 * `&lt` without its `;` too). Passes repeat until nothing decodes (at most eight), so any chain of
 * them is undone (`%26%2384%3B`, `\u0026#84;`, `%252541`); separators an echo may put between
 * characters are then dropped. Every folded character keeps the span [from, to) of the original
 * text it came from. Linear in the text per pass, at most eight: bounded work.
 */

export interface Folded {
  text: string;
  from: Int32Array;
  to: Int32Array;
  /**
   * Per folded character, `from`/`to` widened over the token characters that were dropped as
   * separators right next to it (`-`, `_`, `+`, `/`, at most two a side): a secret that starts or
   * ends with one (a token `_x...`, a base64 core `+...`) loses it from its spelling, but not from
   * its span.
   */
  edgeFrom?: Int32Array;
  edgeTo?: Int32Array;
}

/** Named character references that stand for an ASCII character (the WHATWG list, ASCII only, and the dashes read as `-`). */
const NAMED: Record<string, string> = {
  Tab: "\t", NewLine: "\n", excl: "!", quot: '"', QUOT: '"', num: "#", dollar: "$", percnt: "%", amp: "&", AMP: "&",
  apos: "'", lpar: "(", rpar: ")", ast: "*", midast: "*", plus: "+", comma: ",", period: ".", sol: "/", colon: ":",
  semi: ";", lt: "<", LT: "<", equals: "=", gt: ">", GT: ">", quest: "?", commat: "@", lsqb: "[", lbrack: "[",
  bsol: "\\", rsqb: "]", rbrack: "]", Hat: "^", lowbar: "_", UnderBar: "_", grave: "`", DiacriticalGrave: "`",
  lcub: "{", lbrace: "{", verbar: "|", vert: "|", VerticalLine: "|", rcub: "}", rbrace: "}",
  // decision D42: U+2010 and U+2212, not ASCII, but a reader decoding a token takes them for `-`.
  hyphen: "-", dash: "-", minus: "-",
};
/** The ones a browser also reads without the `;`. */
const LEGACY = ["quot", "QUOT", "amp", "AMP", "lt", "LT", "gt", "GT"];

const ESCAPE = /^(?:%([0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\([\\"/]))/;
const REFERENCE = /^&(?:#(?:([0-9]{1,7})|[xX]([0-9a-fA-F]{1,6}))(;?)|([A-Za-z]{2,16})(;?))/;

/** The character an escape or reference at `i` stands for, and the escape's length; null: none. */
function decodeAt(text: string, i: number): { ch: string; length: number } | null {
  const head = text.charCodeAt(i);
  if (head === 0x25 || head === 0x5c) {
    const m = ESCAPE.exec(text.slice(i, i + 6));
    if (!m) return null;
    if (m[4] !== undefined) return { ch: m[4], length: 2 };
    const code = parseInt(m[1] ?? m[2] ?? m[3]!, 16);
    // Percent and \x escapes of non-ASCII bytes are left: they are bytes of UTF-8, not characters.
    return m[2] === undefined && code >= 0x80 ? null : { ch: String.fromCharCode(code), length: m[0].length };
  }
  if (head !== 0x26) return null;
  const m = REFERENCE.exec(text.slice(i, i + 20));
  if (!m) return null;
  if (m[4] !== undefined) {
    if (m[5] === ";" && NAMED[m[4]] !== undefined) return { ch: NAMED[m[4]]!, length: m[0].length };
    // Without its `;` only a legacy name is read, and only as long as it is (`&ampx` is `&` and `x`).
    const legacy = [...LEGACY].find((name) => m[4]!.startsWith(name));
    return legacy ? { ch: NAMED[legacy]!, length: 1 + legacy.length } : null;
  }
  const code = m[1] !== undefined ? parseInt(m[1], 10) : parseInt(m[2]!, 16);
  return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? { ch: String.fromCodePoint(code), length: m[0].length } : null;
}

/** One decoding pass over `view`, each output character mapped to the original span of its input. */
function decodePass(view: Folded): Folded {
  const { text } = view;
  // Nothing to decode (most answers): the view as it is.
  if (!/[%\\&]/.test(text)) return view;
  // A decoded character is never longer than its escape: the input's length bounds the output's.
  const from = new Int32Array(text.length);
  const to = new Int32Array(text.length);
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; i < text.length; ) {
    const code = text.charCodeAt(i);
    const decoded = code === 0x25 || code === 0x5c || code === 0x26 ? decodeAt(text, i) : null;
    const length = decoded ? decoded.length : 1;
    const ch = decoded ? decoded.ch : text[i]!;
    parts.push(ch);
    for (let k = 0; k < ch.length; k++, n++) {
      from[n] = view.from[i]!;
      to[n] = view.to[i + length - 1]!;
    }
    i += length;
  }
  return { text: parts.join(""), from: from.subarray(0, n), to: to.subarray(0, n) };
}

/** The separators an echo may put between characters: whitespace and `-_:.,;|/+=`. */
const ASCII_SEPARATOR = new Uint8Array(128);
for (const ch of " \t\n\r\f\v-_:.,;|/+=") ASCII_SEPARATOR[ch.charCodeAt(0)] = 1;
const isSeparator = (code: number): boolean => (code < 128 ? ASCII_SEPARATOR[code] === 1 : /\s/.test(String.fromCharCode(code)));

/** Separators that may belong to a token (`-`, `_`, `+`, `/`): a span takes those next to it along. */
const EDGE = new Uint8Array(128);
for (const ch of "-_+/") EDGE[ch.charCodeAt(0)] = 1;
const EDGE_MAX = 2;
const isEdge = (text: string, i: number): boolean => i >= 0 && i < text.length && EDGE[text.charCodeAt(i)] === 1;

function dropSeparators(view: Folded): Folded {
  const { text } = view;
  const from = new Int32Array(text.length);
  const to = new Int32Array(text.length);
  const edgeFrom = new Int32Array(text.length);
  const edgeTo = new Int32Array(text.length);
  const parts: string[] = [];
  let run = 0;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    if (!isSeparator(text.charCodeAt(i))) {
      from[n] = view.from[i]!;
      to[n] = view.to[i]!;
      let a = i;
      while (i - a < EDGE_MAX && isEdge(text, a - 1)) a--;
      let b = i;
      while (b - i < EDGE_MAX && isEdge(text, b + 1)) b++;
      edgeFrom[n] = view.from[a]!;
      edgeTo[n++] = view.to[b]!;
      continue;
    }
    if (i > run) parts.push(text.slice(run, i));
    run = i + 1;
  }
  if (text.length > run) parts.push(text.slice(run));
  return { text: parts.join(""), from: from.subarray(0, n), to: to.subarray(0, n), edgeFrom: edgeFrom.subarray(0, n), edgeTo: edgeTo.subarray(0, n) };
}

/**
 * At most this many decoding passes: an escape escaped again and again (`%252525...`, found from
 * outside) is undone as far as a reader would repeat it; each pass that decodes shrinks the text.
 */
const MAX_PASSES = 8;

/** `text` folded: decoding passes until one changes nothing (at most MAX_PASSES), then without separators. */
export function fold(text: string): Folded {
  const from = new Int32Array(text.length);
  const to = new Int32Array(text.length);
  for (let i = 0; i < text.length; i++) {
    from[i] = i;
    to[i] = i + 1;
  }
  let folded: Folded = { text, from, to };
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const next = decodePass(folded);
    const changed = next.text !== folded.text;
    folded = next;
    if (!changed) break;
  }
  return dropSeparators(folded);
}

/** A spelling as it looks folded, by the same rules as the text. */
export const foldForm = (form: string): string => fold(form).text;

/** A base64 or hex spelling folded: only its separators (`+`, `/`, `=`, `-`, `_`) dropped. */
export const dropSeparatorsOf = (form: string): string => form.replace(/[+/=_-]/g, "");
