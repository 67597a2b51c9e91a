import { ATTEMPT_LIMITS } from "../schemas/delivery-attempts.js";
import { redactLogCapabilities } from "./log-capability.js";
import { foldForm, redactSpans, secretSpans } from "./secret-spans.js";

/**
 * decision D31: the part of an integration's answer that is kept and shown. Pure. An integration
 * may echo the request it got, so the attempt's secrets (access token, HMAC key, signature) are
 * redacted wherever they appear: as sent, JSON- or URL-escaped (every byte or some), hex, and base64
 * at any alignment, with separators between their characters or not (secret-spans.ts).
 */

export interface ExcerptInput {
  /** The body as the egress decoded it (UTF-8, invalid bytes as U+FFFD). */
  body: string;
  contentType: string | undefined;
  /** The egress stopped reading before the end (its 64 KiB cap). */
  truncated: boolean;
  /** The attempt's secrets in the clear; empty strings are ignored. */
  secrets: readonly string[];
}

export interface Excerpt {
  /** Null when there is nothing to show: no body, or not text. A note when a secret was too short to redact safely. */
  text: string | null;
  /** The answer went on past `text`. */
  truncated: boolean;
}

export const REDACTED = "[redacted]";
/** A secret shorter than this would be guessable from where it is redacted: such an answer is not kept. */
const MIN_SECRET = 8;
/** Only the head of a long answer is read: redaction can shrink text at most ~4x, so this still fills 1 KiB. */
const WINDOW = 8 * 1024;
const NONE: Excerpt = { text: null, truncated: false };
/** What is kept instead of an answer holding a secret too short to redact (only an HMAC key can be). */
const SHORT_SECRET: Excerpt = {
  text: `(answer not kept: it contains a secret of the request shorter than ${MIN_SECRET} characters, which cannot be redacted safely; give the run task an HMAC key of at least ${MIN_SECRET} characters)`,
  truncated: false,
};

// text/*, JSON, XML, forms, JavaScript and YAML, and their `+json`/`+xml` kin; no type: judged by its bytes.
const TEXTUAL = /^(text\/[\w.+-]+|application\/(json|xml|x-www-form-urlencoded|javascript|x-yaml|yaml|graphql|[\w.-]+\+(json|xml)))$/i;
// Controls except tab and newline, DEL, C1, bidi and zero-width format characters, line separators, BOM.
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B-\u200F\u2028-\u202E\u2060-\u2069\uFEFF]/g;

const mediaType = (contentType: string): string => contentType.split(";")[0]!.trim();

/** The base64 characters that depend on `bytes` alone when they start `offset` bytes into a run. */
function base64Core(bytes: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
  return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}

/** base64 and base64url of `bytes` at the three alignments a larger blob may put them. */
function base64Forms(bytes: Buffer, forms: Set<string>): void {
  for (let offset = 0; offset < 3; offset++) {
    const core = base64Core(bytes, offset);
    forms.add(core).add(core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
}

/** Whole bytes of hex, at least 8 of them: the signature header (decision D38), or any such secret. */
const HEX_BYTES = /^(?:[0-9a-f]{2}){8,}$/i;

/**
 * decision D38: the bytes a hex secret spells, as an echo that decoded the hex may spell them:
 * base64 at any alignment, every byte `%`- or `\u`-escaped (the folding of secret-spans.ts also
 * matches an echo that left ASCII bytes unescaped), and `0x`/`\x` per byte. Their hex, with or
 * without separators between bytes, is the secret itself.
 */
function byteForms(hex: string, forms: Set<string>): void {
  const bytes = Buffer.from(hex, "hex");
  const each = (format: (pair: string) => string) => (hex.toLowerCase().match(/../g) ?? []).map(format).join("");
  base64Forms(bytes, forms);
  forms.add(each((p) => `%${p}`)).add(each((p) => `\\u00${p}`)).add(each((p) => `0x${p}`)).add(each((p) => `\\x${p}`));
}

/** Every spelling of `secret` that an echo may carry. */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret), bytes.toString("hex")]);
  base64Forms(bytes, forms);
  if (HEX_BYTES.test(secret)) byteForms(secret, forms);
  return [...forms].filter((f) => f.length >= MIN_SECRET);
}

/** At most `max` UTF-8 bytes of `text`, cut between code points. */
function byteHead(text: string, max: number): { text: string; cut: boolean } {
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, "utf8");
    if (bytes + size > max) return { text: text.slice(0, end), cut: true };
    bytes += size;
    end += ch.length;
  }
  return { text, cut: false };
}

/** The excerpt of one answer (D31): at most 1 KiB of text, controls removed, secrets redacted. */
export function responseExcerpt(input: ExcerptInput): Excerpt {
  const { body, contentType } = input;
  if (body === "" || (contentType !== undefined && !TEXTUAL.test(mediaType(contentType)))) return NONE;
  const cut = input.truncated || body.length > WINDOW;
  let text = body.slice(0, WINDOW);
  // A character the cut split in two (a surrogate half, a partial UTF-8 sequence) is not kept.
  if (cut) text = text.replace(/[\uD800-\uDBFF]$/, "").replace(/\uFFFD+$/, "");
  if (text.includes("\uFFFD")) return NONE;
  // decision D32: an echoed `log-read-url` carries its capability; it is recognised by its shape.
  text = redactLogCapabilities(text.replace(CONTROL, ""));
  const secrets = input.secrets.filter((s) => s !== "");
  if (secrets.some((s) => s.length < MIN_SECRET && text.includes(s))) return SHORT_SECRET;
  const forms = [...new Set(secrets.flatMap(secretForms).map(foldForm))].filter((f) => f.length >= MIN_SECRET).sort((a, b) => b.length - a.length);
  const { spans, safeEnd } = secretSpans(text, forms);
  // The window may end inside a secret: what it cut off cannot be recognised, so it goes too; but
  // never into a whole copy, which is redacted instead (trimmed, its head would show).
  const end = cut && forms.length > 0 ? Math.max(safeEnd(forms[0]!.length), ...spans.map((s) => s[1])) : text.length;
  text = redactSpans(text.slice(0, end), spans, REDACTED);
  const head = byteHead(text, ATTEMPT_LIMITS.excerptBytes);
  return head.text === "" ? NONE : { text: head.text, truncated: cut || head.cut };
}
