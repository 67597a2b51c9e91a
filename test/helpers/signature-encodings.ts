/**
 * The redaction oracle for the request signature (decisions D31, D38), written apart from the code
 * it checks: it imports nothing of `src/domain/`. The signature header is the lower-case hex of a
 * 64-byte HMAC-SHA512 digest, so an echo may spell the header's text or the digest's bytes; each
 * spelling below is derived from its encoding's definition.
 */

/** How many characters of a spelling in a row count as a leak (as in secret-encodings.ts). */
const LEAK_CHARS = 8;

const pairs = (hex: string): string[] => hex.match(/../g) ?? [];

/** What an integration that echoes the signature this way puts in its answer, by name. */
export function signatureEchoes(signature: string): { name: string; echo: string }[] {
  const bytes = Buffer.from(signature, "hex");
  const text = Buffer.from(signature, "utf8");
  const percent = (b: Buffer, upper: boolean) => [...b].map((x) => `%${x.toString(16).padStart(2, "0")}`).join("")[upper ? "toUpperCase" : "toLowerCase"]();
  // Python's quote(): unreserved ASCII stays as it is, every other byte is escaped.
  const quote = [...bytes].map((x) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(x)) ? String.fromCharCode(x) : `%${x.toString(16).toUpperCase().padStart(2, "0")}`)).join("");
  const unicode = (b: Buffer) => [...b].map((x) => `\\u${x.toString(16).padStart(4, "0")}`).join("");
  const out = [
    { name: "the signature as sent", echo: signature },
    { name: "the signature in upper case", echo: signature.toUpperCase() },
    { name: "the signature's hex split by spaces", echo: pairs(signature).join(" ") },
    { name: "the signature's hex split by colons, upper case", echo: pairs(signature.toUpperCase()).join(":") },
    { name: "the signature's hex split by dashes", echo: pairs(signature).join("-") },
    { name: "the signature's hex in groups of four", echo: signature.match(/.{4}/g)!.join(" ") },
    { name: "the signature's text percent-escaped", echo: percent(text, true) },
    { name: "the signature's text \\u-escaped", echo: unicode(text) },
    { name: "the hex of the signature's text", echo: text.toString("hex") },
    { name: "the digest's bytes percent-escaped", echo: percent(bytes, false) },
    { name: "the digest's bytes percent-escaped, upper case", echo: percent(bytes, true) },
    { name: "the digest's bytes escaped as Python's quote() does", echo: quote },
    { name: "the digest's bytes \\u-escaped", echo: unicode(bytes) },
    { name: "the digest's bytes as 0x.. per byte", echo: [...bytes].map((x) => `0x${x.toString(16).padStart(2, "0")}`).join(", ") },
    { name: "the digest's bytes as \\x.. per byte", echo: [...bytes].map((x) => `\\x${x.toString(16).padStart(2, "0")}`).join("") },
  ];
  for (const encoding of ["base64", "base64url"] as const) {
    for (const before of [0, 1, 2]) {
      const lead = Buffer.from("{k}".slice(0, before));
      out.push({ name: `${encoding} of the digest's bytes after ${before} byte(s)`, echo: Buffer.concat([lead, bytes, Buffer.from('"}')]).toString(encoding) });
      out.push({ name: `${encoding} of the signature's text after ${before} byte(s)`, echo: Buffer.concat([lead, text, Buffer.from('"}')]).toString(encoding) });
    }
  }
  return out;
}

/** The base64 characters that depend on `bytes` alone when `before` bytes precede them. */
function stableCore(bytes: Buffer, before: number, encoding: "base64" | "base64url"): string {
  const after = 3 + ((3 - ((before + bytes.length) % 3)) % 3);
  const amid = (fill: number) => Buffer.concat([Buffer.alloc(before, fill), bytes, Buffer.alloc(after, fill)]).toString(encoding);
  const zeros = amid(0x00);
  const ones = amid(0xff);
  return [...zeros].filter((ch, i) => ch === ones[i]).join("");
}

/** `text` as a reader undoes a disguise: escapes decoded to the bytes they name, separators dropped. */
const undisguise = (text: string): string =>
  text
    .replace(/0x([0-9a-fA-F]{2})|\\x([0-9a-fA-F]{2})/g, (_, a?: string, b?: string) => String.fromCharCode(parseInt((a ?? b)!, 16)))
    .replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/[\s\-_:.,;|/+=]/g, "");

/**
 * Which spellings of `signature` `text` still holds LEAK_CHARS characters of in a row, as it
 * stands or undisguised: its hex, the base64 and base64url of its text and of the digest's bytes,
 * and the digest's bytes as characters.
 */
export function leakedSignature(text: string, signature: string): string[] {
  const bytes = Buffer.from(signature, "hex");
  const utf8 = Buffer.from(signature, "utf8");
  const forms: { name: string; form: string; undisguised?: boolean }[] = [{ name: "hex", form: signature }];
  for (const encoding of ["base64", "base64url"] as const) {
    for (const before of [0, 1, 2]) {
      forms.push({ name: `${encoding} of the digest`, form: stableCore(bytes, before, encoding) });
      forms.push({ name: `${encoding} of the text`, form: stableCore(utf8, before, encoding) });
    }
  }
  forms.push({ name: "the digest's bytes", form: undisguise(bytes.toString("latin1")), undisguised: true });
  const plain = text.toLowerCase();
  const open = undisguise(text).toLowerCase();
  const holds = (haystack: string, form: string) => {
    const lower = form.toLowerCase();
    for (let i = 0; i + LEAK_CHARS <= lower.length; i++) if (haystack.includes(lower.slice(i, i + LEAK_CHARS))) return true;
    return false;
  };
  return forms.filter(({ form, undisguised }) => (!undisguised && holds(plain, form)) || holds(open, undisguise(form))).map(({ name }) => name);
}
