import type { TagLevel } from "../schemas/run-tasks.js";
import { html, raw, type Html } from "./escape.js";

/**
 * Tag labels (spec 2.3): levels other than `none` carry a colour AND an icon, plus the level as
 * hidden text for screen readers, so no reader depends on colour alone.
 */
const svg = (body: string): Html =>
  raw(`<svg viewBox="0 0 16 16" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round">${body}</svg>`);

const ICONS: Record<Exclude<TagLevel, "none">, Html> = {
  // A circled cross.
  error: svg(`<circle cx="8" cy="8" r="6.6"/><path d="M5.6 5.6l4.8 4.8M10.4 5.6l-4.8 4.8"/>`),
  // A triangle with an exclamation mark.
  warning: svg(`<path d="M8 1.8L14.8 13.8H1.2Z" stroke-linejoin="round"/><path d="M8 6.2v3.6M8 11.8v.1"/>`),
  // A circled "i".
  info: svg(`<circle cx="8" cy="8" r="6.6"/><path d="M8 7.2v4.2M8 4.8v.1"/>`),
};

export const LEVEL_NAMES: Record<TagLevel, string> = { error: "Error", warning: "Warning", info: "Info", none: "None" };

/** One label: `<span class="tag tag-<level>">`, with icon and hidden level text unless `none`. */
export function renderTag(entry: { label: string; level: TagLevel }): Html {
  if (entry.level === "none") return html`<span class="tag tag-none" data-level="none">${entry.label}</span>`;
  return html`<span class="tag tag-${entry.level}" data-level="${entry.level}" title="${LEVEL_NAMES[entry.level]}">${ICONS[entry.level]}<span class="sr-only">${LEVEL_NAMES[entry.level]}: </span>${entry.label}</span>`;
}

export const renderTags = (entries: readonly { label: string; level: TagLevel }[]): Html => html`${entries.map(renderTag)}`;
