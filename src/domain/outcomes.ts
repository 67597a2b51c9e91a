import type { TagEntry, TagLevel, Tags } from "../schemas/run-tasks.js";

/** Outcome tags: write form to read form, and the enriched `severity`/`status` keys (decision D18). */

/** Read form: HCP Terraform returns tags as an array, not the map integrations send. */
export interface ReadTag {
  label: string;
  value: { label: string; level: TagLevel }[];
}

/** Write form; `level` is optional so maps built by hand or read back from storage convert too. */
export type WriteTags = Readonly<Record<string, readonly { label: string; level?: TagLevel | undefined }[]>>;

/** Map to array, keeping key order and filling the default level `none`. */
export function toReadTags(tags: WriteTags | null | undefined): ReadTag[] {
  return Object.entries(tags ?? {}).map(([label, entries]) => ({
    label,
    value: entries.map((entry) => ({ label: entry.label, level: entry.level ?? "none" })),
  }));
}

/** Higher is more severe: error > warning > info > none. */
export const SEVERITY_RANK = { none: 0, info: 1, warning: 2, error: 3 } as const satisfies Record<TagLevel, number>;

/** The order of `sort=severity`: most severe first. */
export const SEVERITY_ORDER = ["error", "warning", "info", "none"] as const satisfies readonly TagLevel[];

export const ENRICHED_TAG_KEYS = ["severity", "status"] as const;
export type EnrichedTagKey = (typeof ENRICHED_TAG_KEYS)[number];

/** Integrations write `Severity`, `severity` or `SEVERITY`; the first matching key wins. */
export function findTag(tags: Tags | null | undefined, name: string): TagEntry[] | undefined {
  const wanted = name.toLowerCase();
  for (const [key, entries] of Object.entries(tags ?? {})) {
    if (key.toLowerCase() === wanted) return entries;
  }
  return undefined;
}

/**
 * The most severe entry of a key (its first such entry on a tie), or null without the key. With
 * `Severity: [{High, error}, {Recoverable, info}]` that is `High`/`error`.
 */
export function enrichedTag(tags: Tags | null | undefined, key: EnrichedTagKey): TagEntry | null {
  let best: TagEntry | null = null;
  for (const entry of findTag(tags, key) ?? []) {
    if (best === null || SEVERITY_RANK[entry.level] > SEVERITY_RANK[best.level]) best = entry;
  }
  return best;
}

export const severityOf = (tags: Tags | null | undefined): TagEntry | null => enrichedTag(tags, "severity");
export const statusOf = (tags: Tags | null | undefined): TagEntry | null => enrichedTag(tags, "status");

/** The level used for sorting; an outcome without a severity tag sorts as `none`. */
export const severityLevelOf = (tags: Tags | null | undefined): TagLevel => severityOf(tags)?.level ?? "none";

/** Comparator for `sort=severity`: most severe first; equal ones keep their order (sort is stable). */
export function compareBySeverity(a: { tags?: Tags | null }, b: { tags?: Tags | null }): number {
  return SEVERITY_RANK[severityLevelOf(b.tags)] - SEVERITY_RANK[severityLevelOf(a.tags)];
}
