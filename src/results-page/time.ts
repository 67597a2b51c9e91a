import { html, type Html } from "./escape.js";

/** Instants as the page shows them: UTC, to the second (D9 timestamps carry milliseconds). */

/** `2026-01-01T00:00:00.000Z` as `2026-01-01 00:00:00 UTC`, the resolution the page shows. */
export function timeText(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function time(iso: string): Html {
  if (Number.isNaN(Date.parse(iso))) return html`<span>${iso}</span>`;
  return html`<time datetime="${iso}">${timeText(iso)}</time>`;
}

/** An instant as its time of day (`14:52:07 UTC`) when it falls on the UTC day of `now`, else in full. */
export function clockTime(iso: string, now: string): Html {
  const text = timeText(iso);
  if (text === iso) return html`<span>${iso}</span>`;
  return html`<time datetime="${iso}">${text.slice(0, 10) === now.slice(0, 10) ? text.slice(11) : text}</time>`;
}
