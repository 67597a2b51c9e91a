import MarkdownIt from "markdown-it";
import { escapeHtml, EXTERNAL_REL, isSafeMarkdownLink } from "./escape.js";

/** Bodies past this many characters are cut before rendering; the page says so. */
export const MAX_BODY_CHARS = 64 * 1024;

/**
 * Outcome bodies are Markdown from an integration. Raw HTML is off (shown as text), linkify is on
 * (reports are full of bare URLs), and every link, autolink and image source passes
 * {@link isSafeMarkdownLink}: anything else stays text.
 */
function createMarkdown(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
  md.validateLink = isSafeMarkdownLink;

  md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
    tokens[idx]!.attrSet("rel", EXTERNAL_REL);
    return self.renderToken(tokens, idx, options);
  };
  // An image would load from the integration's server (a tracking pixel at best, and the CSP blocks
  // it anyway): it becomes a link named after its alt text.
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!;
    const src = token.attrGet("src") ?? "";
    const alt = self.renderInlineAsText(token.children ?? [], options, env) || src;
    return `<a href="${escapeHtml(src)}" rel="${EXTERNAL_REL}" class="image-link">image: ${escapeHtml(alt)}</a>`;
  };
  return md;
}

const markdown = createMarkdown();

/** Safe HTML for an outcome body, and whether it was cut at {@link MAX_BODY_CHARS}. */
export function renderMarkdown(body: string): { html: string; truncated: boolean } {
  const truncated = body.length > MAX_BODY_CHARS;
  return { html: markdown.render(truncated ? body.slice(0, MAX_BODY_CHARS) : body), truncated };
}
