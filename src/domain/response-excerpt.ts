import { INVISIBLE_FORMAT } from "./invisible.js";
import { ATTEMPT_LIMITS } from "../schemas/delivery-attempts.js";
import { redactLogCapabilities } from "./log-capability.js";
import { fold } from "./fold.js";
import { secretForms } from "./secret-forms.js";
import { redactSpans, secretSpans } from "./secret-spans.js";

/**
 * decision D31: the part of an integration's answer that is kept and shown. Pure. An integration
 * may echo the request it got, so the attempt's secrets (access token, HMAC key, signature) are
 * redacted wherever they appear: as sent, escaped (JSON, URL, HTML references), hex, and base64 at
 * any alignment, and any pair of those, with separators between their characters or not
 * (fold.ts, secret-forms.ts, secret-spans.ts). A log capability (D32) is found by its shape the same
 * ways. decision D42: the excerpt says which secrets it redacted, so the callback token is burned.
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
  /** decision D42: the secrets (of `ExcerptInput.secrets`) the answer spelled in any way found, redacted or not kept. */
  found?: readonly string[];
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
// Controls except tab and newline, DEL, C1, and the invisible format characters (bidi, zero-width, separators, BOM).
const CONTROL = new RegExp(`[\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F${INVISIBLE_FORMAT}]`, "g");

const mediaType = (contentType: string): string => contentType.split(";")[0]!.trim();

/** decision D32: what starts every log capability, in each spelling: its token runs on after it. */
const CAPABILITY_MARKERS = secretForms("rplog1.");

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
  const short = secrets.filter((s) => s.length < MIN_SECRET && text.includes(s));
  if (short.length > 0) return { ...SHORT_SECRET, found: short };
  const folded = fold(text);
  const owner = new Map<string, string>();
  for (const secret of secrets) {
    for (const form of secretForms(secret, folded.text.length)) if (form.length >= MIN_SECRET) owner.set(form, secret);
  }
  const forms = [...owner.keys()].sort((a, b) => b.length - a.length);
  const { spans, found, safeEnd } = secretSpans(text, folded, forms, CAPABILITY_MARKERS);
  // The window may end inside a secret: what it cut off cannot be recognised, so it goes too; but
  // never into a whole copy, which is redacted instead (trimmed, its head would show).
  const end = cut && forms.length > 0 ? Math.max(safeEnd(), ...spans.map((s) => s[1])) : text.length;
  text = redactSpans(text.slice(0, end), spans, REDACTED);
  const gave = [...new Set([...found].map((form) => owner.get(form)!))];
  const head = byteHead(text, ATTEMPT_LIMITS.excerptBytes);
  const kept: Excerpt = head.text === "" ? NONE : { text: head.text, truncated: cut || head.cut };
  return gave.length > 0 ? { ...kept, found: gave } : kept;
}
