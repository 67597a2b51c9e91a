import type { Folded } from "./fold.js";
import { asciiLower } from "./secret-forms.js";

/**
 * Where an answer spells a secret, however it dresses it (decision D31). The spellings of
 * `secretForms` are found in a folded view of the text, not the text itself (fold.ts: percent,
 * JSON and HTML escapes decoded, twice, separators an echo may put between characters dropped,
 * from both the text and the spellings). A match in the folded view marks the span of the original
 * text it came from. Pure.
 */


const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export interface SecretSpans {
  /** Spans [from, to) of the original text that spell a secret, in order, not overlapping. */
  spans: [number, number][];
  /** The forms (lower case) that were found: which secrets the text gave away. */
  found: Set<string>;
  /**
   * Where the original text must end so that no spelling cut short can remain at its end (for a
   * text the egress cut off): the start of the longest end of the folded text that begins a form.
   */
  safeEnd: () => number;
}

/**
 * Characters a token keeps to in any of the spellings folded (base64, hex, percent, `\u`, `\x`,
 * HTML references): a marker's span runs on over them to the end of what it starts.
 */
const RUN = /[A-Za-z0-9+/=_\-.%&#;\\:]/;

/**
 * How many characters at the end of `text` begin `form` (a proper prefix, lower case), by the
 * prefix function of `form` run over the text's last characters: linear in the form's length.
 */
function overlap(text: string, form: string): number {
  const pattern = form.slice(0, -1);
  if (pattern.length === 0) return 0;
  const prefix = new Array<number>(pattern.length).fill(0);
  for (let i = 1, k = 0; i < pattern.length; i++) {
    while (k > 0 && pattern[i] !== pattern[k]) k = prefix[k - 1]!;
    if (pattern[i] === pattern[k]) k++;
    prefix[i] = k;
  }
  let k = 0;
  for (let i = Math.max(0, text.length - pattern.length); i < text.length; i++) {
    while (k > 0 && (k === pattern.length || text[i] !== pattern[k])) k = prefix[k - 1]!;
    if (text[i] === pattern[k]) k++;
  }
  return k;
}

function merge(spans: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [start, end] of spans.sort((a, b) => a[0] - b[0])) {
    const last = out.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

/**
 * Every span of `text` (`folded`: its folded view) that spells one of `forms` (folded, ASCII lower
 * case), case-insensitively, and of `markers` (folded spellings of what starts a secret known by its shape, such as a log
 * capability's `rplog1.`), each run on to the end of the token it starts.
 */
export function secretSpans(text: string, folded: Folded, forms: readonly string[], markers: readonly string[] = []): SecretSpans {
  const spans: [number, number][] = [];
  const found = new Set<string>();
  const at = (index: number, length: number): [number, number] => [(folded.edgeFrom ?? folded.from)[index]!, (folded.edgeTo ?? folded.to)[index + length - 1]!];
  const lower = asciiLower(folded.text);
  for (const form of forms) {
    if (/[^\x00-\x7f]/.test(form)) {
      // Beyond ASCII, letter case is Unicode's: a regular expression, of this form only (rare: a key's).
      for (const m of folded.text.matchAll(new RegExp(escapeRegExp(form), "gi"))) {
        spans.push(at(m.index, m[0].length));
        found.add(form);
      }
      continue;
    }
    for (let i = lower.indexOf(form); i !== -1; i = lower.indexOf(form, i + form.length)) {
      spans.push(at(i, form.length));
      found.add(form);
    }
  }
  for (const marker of markers) {
    for (let i = lower.indexOf(marker); i !== -1; i = lower.indexOf(marker, i + 1)) {
      const span = at(i, marker.length);
      while (span[1] < text.length && RUN.test(text[span[1]]!)) span[1]++;
      spans.push(span);
    }
  }
  const safeEnd = (): number => {
    const start = Math.min(...forms.map((form) => lower.length - overlap(lower, form)));
    return start >= lower.length ? text.length : folded.from[start]!;
  };
  return { spans: merge(spans), found, safeEnd };
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
