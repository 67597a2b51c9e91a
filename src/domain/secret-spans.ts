/**
 * Where an answer spells a secret, however it dresses it (decision D31). The spellings of
 * `secretForms` are found in a folded view of the text, not the text itself: percent escapes
 * (`%64%4B`, every byte escaped or some) and JSON `\uXXXX` escapes are decoded, and separators an
 * echo may put between characters (whitespace, `-`, `_`, `:`, `.`, `,`, `;`, `|`, `/`, `+`, `=`)
 * are dropped from both the text and the spellings. A match in the folded view marks the span of
 * the original text it came from. Pure.
 */

const SEPARATOR = /[\s\-_:.,;|/+=]/;
const HEX2 = /^[0-9a-fA-F]{2}$/;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** The text folded: its characters and, for each, the original span [from, to) it came from. */
interface Folded {
  text: string;
  from: number[];
  to: number[];
}

/** One folded character at `i`: `%XX` (ASCII), `\uXXXX`, or the character itself; with its length. */
function decodeAt(text: string, i: number): { ch: string; length: number } {
  if (text[i] === "%" && HEX2.test(text.slice(i + 1, i + 3))) {
    const code = parseInt(text.slice(i + 1, i + 3), 16);
    if (code < 0x80) return { ch: String.fromCharCode(code), length: 3 };
  }
  if (text[i] === "\\" && text[i + 1] === "u" && HEX4.test(text.slice(i + 2, i + 6))) {
    return { ch: String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)), length: 6 };
  }
  return { ch: text[i]!, length: 1 };
}

function fold(text: string): Folded {
  const folded: Folded = { text: "", from: [], to: [] };
  for (let i = 0; i < text.length; ) {
    const { ch, length } = decodeAt(text, i);
    if (!SEPARATOR.test(ch)) {
      folded.text += ch;
      folded.from.push(i);
      folded.to.push(i + length);
    }
    i += length;
  }
  return folded;
}

/** A spelling as it looks folded, by the same rules as the text. */
export const foldForm = (form: string): string => fold(form).text;

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export interface SecretSpans {
  /** Spans [from, to) of the original text that spell a secret, in order, not overlapping. */
  spans: [number, number][];
  /**
   * Where the original text must end so that no partial spelling of `longest` folded characters
   * can remain at its end (for a text the egress cut off).
   */
  safeEnd: (longest: number) => number;
}

/** Every span of `text` that spells one of `forms` (already folded, longest first), case-insensitively. */
export function secretSpans(text: string, forms: readonly string[]): SecretSpans {
  const folded = fold(text);
  const spans: [number, number][] = [];
  if (forms.length > 0) {
    for (const m of folded.text.matchAll(new RegExp(forms.map(escapeRegExp).join("|"), "gi"))) {
      const start = folded.from[m.index]!;
      const end = folded.to[m.index + m[0].length - 1]!;
      const last = spans.at(-1);
      if (last && start <= last[1]) last[1] = Math.max(last[1], end);
      else spans.push([start, end]);
    }
  }
  const safeEnd = (longest: number): number => {
    const keep = folded.text.length - (longest - 1);
    return keep <= 0 ? 0 : (folded.from[keep] ?? text.length);
  };
  return { spans, safeEnd };
}

/** `text` with every span replaced by `marker`. */
export function redactSpans(text: string, spans: readonly [number, number][], marker: string): string {
  let out = "";
  let at = 0;
  for (const [from, to] of spans) {
    out += text.slice(at, from) + marker;
    at = to;
  }
  return out + text.slice(at);
}
