import { INVISIBLE_FORMAT } from "../domain/invisible.js";
import type { AuditEntry } from "../schemas/audit.js";
import { html, type Html } from "./escape.js";
import { layout, type Chrome } from "./layout.js";

/** The filters of the audit view: each a case-insensitive substring; empty matches everything. */
export interface AuditFilters {
  actor: string;
  resource: string;
  action: string;
}

/** What one view reads at most, newest first: a filter that matches rarely stops there, and says so. */
export const AUDIT_VIEW_SCAN = 5_000;
export const AUDIT_VIEW_ROWS = 100;

const FILTER_MAX = 100;

/** The filters of a request's query, each trimmed and cut to 100 characters (nothing else is read). */
export function auditFiltersOf(url: URL): AuditFilters {
  const get = (name: string): string => (url.searchParams.get(name) ?? "").trim().slice(0, FILTER_MAX);
  return { actor: get("actor"), resource: get("resource"), action: get("action") };
}

const has = (haystack: readonly (string | null)[], needle: string): boolean =>
  needle === "" || haystack.some((h) => h !== null && h.toLowerCase().includes(needle.toLowerCase()));

/**
 * `before`: the view shows events older than that seq (its "Older events" link). Anything but a
 * plain number of up to 15 digits is no bound: the newest events, as without it.
 */
export function auditBeforeOf(url: URL): number | undefined {
  const value = url.searchParams.get("before") ?? "";
  return /^[1-9]\d{0,14}$/.test(value) ? Number(value) : undefined;
}

/** Whether an event passes the filters: actor by token id, user, team or description; resource by type or id. */
export function matchesAudit(entry: AuditEntry, f: AuditFilters): boolean {
  const { actor } = entry;
  return (
    has([actor.tokenId, actor.userId, actor.teamId, actor.description, actor.tokenKind], f.actor) &&
    has([entry.resource.type, entry.resource.id], f.resource) &&
    has([entry.action], f.action)
  );
}

// Bidi controls, zero-width and other invisible format characters, line and paragraph separators: in a trail they could make a
// recorded value read as another (found from outside). Control characters too (found from outside: a NUL went out as a
// raw byte, a newline could start a fake-looking line). Shown, never interpreted or dropped.
const INVISIBLE = new RegExp(`[\\u0000-\\u001F\\u007F-\\u009F${INVISIBLE_FORMAT}]`, "g");

/** `text` with every invisible format character written out as ⟨U+XXXX⟩. */
export const visible = (text: string): string => text.replace(INVISIBLE, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);

function changeText(entry: AuditEntry): string {
  return entry.changes
    .map((c) => (c.note ? `${c.field}: ${c.note}` : `${c.field}: ${"old" in c ? JSON.stringify(c.old) : "-"} → ${"new" in c ? JSON.stringify(c.new) : "-"}`))
    .join("; ");
}

function row(entry: AuditEntry): Html {
  const { actor } = entry;
  // decision D53: a host-named actor (runplane.audit.as) has no credential: say whose word it is.
  const who = visible(actor.kind === "system" ? "runplane" : `${actor.description} (${actor.kind === "host" ? "named by the host" : (actor.tokenId ?? "-")})`);
  const behind = visible(actor.userId ?? actor.teamId ?? "");
  return html`<tr>
<td><time datetime="${new Date(entry.at).toISOString()}">${new Date(entry.at).toISOString()}</time></td>
<td>${who}${behind ? html`<br><span class="muted">${behind}</span>` : ""}</td>
<td>${visible(entry.resource.type)}<br><span class="muted">${visible(entry.resource.id)}</span></td>
<td>${visible(entry.action)}</td>
<td>${visible(changeText(entry))}</td>
<td>${visible(entry.request.clientAddress ?? "")}</td>
</tr>`;
}

/** decision D53: an organization's audit view for its owners, newest first, with its filters. */
export function auditPage(
  chrome: Chrome,
  organization: string,
  filters: AuditFilters,
  rows: readonly AuditEntry[],
  scanned: { events: number; complete: boolean; before?: number | undefined; next?: number | undefined },
): string {
  const input = (name: keyof AuditFilters, label: string) => html`<label>${label} <input name="${name}" value="${filters[name]}" maxlength="${FILTER_MAX}"></label>`;
  const older = scanned.before === undefined ? "" : ` older than event ${scanned.before}`;
  const limit = scanned.complete ? "" : ` (${scanned.events} events searched)`;
  // Links keep the filters; "Older events" continues where this view stopped reading.
  const query = (before?: number) => {
    const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ""));
    if (before !== undefined) q.set("before", String(before));
    const text = q.toString();
    return text === "" ? "?" : `?${text}`;
  };
  const nav = html`<nav class="pager">${scanned.next === undefined ? "" : html`<a href="${query(scanned.next)}" rel="next">Older events</a>`}${scanned.before === undefined ? "" : html` <a href="${query()}">Newest events</a>`}</nav>`;
  return layout(chrome, `${organization} audit trail`, html`<h1>${organization}: audit trail</h1>
<section class="card">
<form method="get" class="filters">${input("actor", "Actor")} ${input("resource", "Resource")} ${input("action", "Action")} <button type="submit">Filter</button></form>
${
  rows.length === 0
    ? html`<p class="empty">No events${older} match${limit}.</p>`
    : html`<table class="run-list audit">
<caption>${rows.length} newest matching event${rows.length === 1 ? "" : "s"}${older}${limit}</caption>
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">Actor</th><th scope="col">Resource</th><th scope="col">Action</th><th scope="col">Changes</th><th scope="col">Client</th></tr></thead>
<tbody>
${rows.map(row)}
</tbody>
</table>`
}
${nav}
</section>`);
}
