/**
 * The redaction oracle for decision D31, written apart from the code it checks: it imports nothing
 * of `src/domain/response-excerpt.ts`, so dropping a spelling there cannot drop it here too. It
 * knows the spellings the module promises to redact (as sent, JSON- or URL-escaped, hex, base64 at
 * any alignment) and base64url, each derived from the encoding's definition, not from the module.
 */

export interface Spelling {
  /** What the spelling is, as a failing assertion shows it: "hex of the key". */
  name: string;
  /** The characters that are the secret's alone: any run of them in an answer gives it away. */
  form: string;
  /** What an integration that echoes the secret this way puts in its answer. */
  echo: string;
}

/**
 * How many characters of a spelling in a row count as a leak. Eight base64 characters carry 48 bits
 * of the secret and eight hex characters 32: enough to check a guess or find the secret elsewhere.
 * Shorter runs are no sound test: 4 hex digits or a short word turn up in any answer by chance, and
 * next to each redaction a base64 character may mix a few bits of the secret with its neighbour's.
 */
export const LEAK_CHARS = 8;

/**
 * The base64 (or base64url) characters of `bytes` when `before` bytes precede them: those that come
 * out the same whatever bytes stand around them. A character that straddles the secret's edge differs
 * between all-zero and all-one neighbours, so keeping the positions where both agree keeps exactly
 * the characters that depend on the secret alone.
 */
function stableCore(bytes: Buffer, before: number, encoding: "base64" | "base64url"): string {
  // At least 3 bytes after it, and a whole number of 3-byte groups in all: no `=` padding, which would agree.
  const after = 3 + ((3 - ((before + bytes.length) % 3)) % 3);
  const amid = (fill: number) => Buffer.concat([Buffer.alloc(before, fill), bytes, Buffer.alloc(after, fill)]).toString(encoding);
  const zeros = amid(0x00);
  const ones = amid(0xff);
  return [...zeros].filter((ch, i) => ch === ones[i]).join("");
}

/** Every spelling of `secret` (named `name`) that an echo of the request may carry. */
export function spellings(name: string, secret: string): Spelling[] {
  const bytes = Buffer.from(secret, "utf8");
  const hex = bytes.toString("hex");
  const asIs = (what: string, form: string): Spelling => ({ name: `${what} ${name}`, form, echo: form });
  const out = [
    asIs("the", secret),
    asIs("JSON-escaped", JSON.stringify(secret).slice(1, -1)),
    asIs("URL-encoded", encodeURIComponent(secret)),
    asIs("hex of the", hex),
    asIs("upper-case hex of the", hex.toUpperCase()),
  ];
  for (const encoding of ["base64", "base64url"] as const) {
    for (const before of [0, 1, 2]) {
      // The echo is a larger blob: `before` bytes of something else, the secret, then more.
      const blob = Buffer.concat([Buffer.from("{k}".slice(0, before)), bytes, Buffer.from('"}\n')]);
      out.push({ name: `${encoding} of the ${name} after ${before} byte${before === 1 ? "" : "s"}`, form: stableCore(bytes, before, encoding), echo: blob.toString(encoding) });
    }
  }
  // A spelling that is another one over again (a token has nothing to escape) is listed once.
  return out.filter((s, i) => out.findIndex((t) => t.form === s.form && t.echo === s.echo) === i);
}

/** The names of `forms` of which `text` holds LEAK_CHARS characters in a row (letter case ignored). */
function leakedForms(text: string, forms: readonly { name: string; form: string }[]): string[] {
  const haystack = text.toLowerCase();
  return forms
    .filter(({ form }) => {
      const run = Math.min(LEAK_CHARS, form.length);
      const lower = form.toLowerCase();
      for (let i = 0; i + run <= lower.length; i++) if (haystack.includes(lower.slice(i, i + run))) return true;
      return false;
    })
    .map(({ name }) => name);
}

/** The names of the spellings of `secrets` of which `text` still holds LEAK_CHARS characters in a row. */
export function leakedSpellings(text: string, secrets: Record<string, string>): string[] {
  return leakedForms(text, Object.entries(secrets).flatMap(([name, secret]) => spellings(name, secret)));
}

/** Characters an echo may put between a secret's characters, and that a reader can drop again. */
const SEPARATORS = /[\s\-_:.,;|/+=]/g;

/**
 * Echoes that disguise a spelling so that it no longer appears as a run of characters (an attack
 * an outside review carried out): every byte percent-escaped, every character JSON
 * `\u`-escaped, characters split by separators. Each is trivially undone by a reader.
 */
export function disguisedEchoes(name: string, secret: string): { name: string; echo: string }[] {
  const bytes = [...Buffer.from(secret, "utf8")];
  const hex = Buffer.from(secret, "utf8").toString("hex");
  const percent = (upper: boolean) => bytes.map((b) => `%${b.toString(16).padStart(2, "0")}`).map((p) => (upper ? p.toUpperCase() : p)).join("");
  const unicode = [...secret].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  const split = (s: string, by: string, every: number) => s.match(new RegExp(`.{1,${every}}`, "gsu"))!.join(by);
  return [
    { name: `every byte of the ${name} percent-escaped`, echo: percent(true) },
    { name: `every byte of the ${name} percent-escaped, lower case`, echo: percent(false) },
    { name: `every character of the ${name} JSON-escaped`, echo: unicode },
    { name: `the ${name} split by dashes`, echo: split(secret, "-", 4) },
    { name: `the ${name} one character apart`, echo: split(secret, " ", 1) },
    { name: `the hex of the ${name} split by colons`, echo: split(hex, ":", 2) },
    { name: `the hex of the ${name} split by spaces`, echo: split(hex, " ", 8) },
    // Found from outside: an escape escaped again and again, and the secret written backwards.
    { name: `every byte of the ${name} percent-escaped three times`, echo: percent(false).replace(/%/g, "%2525") },
    { name: `every byte of the ${name} percent-escaped five times`, echo: percent(false).replace(/%/g, "%2525252525") },
    { name: `the ${name} reversed`, echo: [...secret].reverse().join("") },
  ];
}

/** Percent escapes decoded as often as a reader would repeat it, until nothing changes. */
function percentDecoded(text: string): string {
  for (let round = 0; round < 16; round++) {
    const next = text.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    if (next === text) return text;
    text = next;
  }
  return text;
}

/** `text` as a reader undoes a disguise: escapes decoded, separators dropped. */
const undisguise = (text: string): string =>
  percentDecoded(text)
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(SEPARATORS, "");

/** Like {@link leakedSpellings}, after undoing every disguise in `text` (reading it backwards too) and the spellings alike. */
export function leakedUndisguised(text: string, secrets: Record<string, string>): string[] {
  const forms = Object.entries(secrets).flatMap(([name, secret]) => spellings(name, secret).map((s) => ({ name: s.name, form: undisguise(s.form) })));
  const plain = undisguise(text);
  return [...new Set([...leakedForms(plain, forms), ...leakedForms([...plain].reverse().join(""), forms)])];
}
