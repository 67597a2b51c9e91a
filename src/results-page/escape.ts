/** Escaping and URL checks for everything an integration or a user controls. */

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for element content and quoted attribute values alike. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** Tagged template whose interpolations are escaped unless they are already {@link Html}. */
export interface Html {
  readonly html: string;
}
export const raw = (html: string): Html => ({ html });

type Part = Html | string | number | null | undefined | false | readonly Part[];

const partToString = (part: Part): string => {
  if (part === null || part === undefined || part === false) return "";
  if (Array.isArray(part)) return part.map(partToString).join("");
  if (typeof part === "object") return (part as Html).html;
  return escapeHtml(String(part));
};

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  parts.forEach((part, i) => (out += partToString(part) + strings[i + 1]!));
  return raw(out);
}

const LINK_PROTOCOLS = new Set(["http:", "https:"]);

/**
 * The href of an integration's `url` (result or outcome), or null when it must not become a link:
 * only absolute http(s) URLs qualify. Parsing with the WHATWG parser applies the same tab, newline
 * and control character stripping a browser would, so `java\tscript:` cannot slip through.
 */
export function safeExternalHref(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return LINK_PROTOCOLS.has(url.protocol) && url.username === "" && url.password === "" ? url.href : null;
  } catch {
    return null;
  }
}

const MARKDOWN_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
const RELATIVE_BASE = "https://relative.invalid/";

/** Links inside an outcome body: http, https, mailto and relative references only. */
export function isSafeMarkdownLink(value: string): boolean {
  try {
    return MARKDOWN_PROTOCOLS.has(new URL(value, RELATIVE_BASE).protocol);
  } catch {
    return false;
  }
}

/** `rel` of every link that leads to an integration's content. */
export const EXTERNAL_REL = "noopener noreferrer nofollow";
