/**
 * decision D59 (change of 2026-11-29): the audit trail's reads by time, written once for both SQL
 * dialects (`q` is the schema prefix of the table names, empty on SQLite). No index orders the
 * events by time: within an organization `at` never decreases as `seq` grows (every append takes
 * the larger of its time and the head's) and seq is dense from the pruned prefix on, so the events
 * after a time are a suffix by seq and the events before one a prefix, both found through the
 * primary key `(organization, seq)`. Parameters by name: `@organization`, `@since`, `@before`, `@limit`.
 */

const mid = (lo: string, hi: string): string => `(${lo} + (${hi} - ${lo}) / 2)`;

/**
 * One step's look: the first stored event of [from, to) by seq, answered as its seq when its time
 * is not after @since (so the first later event comes after it), else 0 (the first later event is
 * this one or an earlier one), and 0 when none is stored there. A seek rather than a point lookup,
 * so a missing row cannot derail the search.
 */
const probe = (q: string, from: string, to: string): string => `coalesce((SELECT CASE WHEN p.at > @since THEN 0 ELSE p.seq END
        FROM ${q}audit_events AS p WHERE p.organization = @organization AND p.seq >= ${from} AND p.seq < ${to}
        ORDER BY p.seq LIMIT 1), 0)`;

/**
 * The seq of the organization's first event later than @since, or no row. A binary search over
 * [first stored seq, head seq + 1), one step a row of the recursive query: each row carries its
 * bounds and the look at their middle (-1 on the first row, which has looked at nothing), and the
 * next narrows them by it (stored events below `lo` are at or before @since, those from `hi` on
 * later). log2(events) + 3 seeks, each a descent of the primary key: the same answer the
 * index on (organization, at, seq) gave, ties of `at` and clamped (clock-lagging) times included,
 * since the first later event by seq is the first by time.
 */
export function firstAfterSql(q: string): string {
  const lo = `CASE WHEN s.probe > 0 THEN s.probe + 1 ELSE s.lo END`;
  const hi = `CASE WHEN s.probe = 0 THEN ${mid("s.lo", "s.hi")} ELSE s.hi END`;
  return `WITH RECURSIVE search(lo, hi, probe) AS (
      SELECT (SELECT f.seq FROM ${q}audit_events AS f WHERE f.organization = @organization ORDER BY f.seq LIMIT 1),
        (SELECT h.seq + 1 FROM ${q}audit_heads AS h WHERE h.organization = @organization), CAST(-1 AS bigint)
      UNION ALL
      SELECT ${lo}, ${hi}, ${probe(q, mid(lo, hi), hi)} FROM search AS s WHERE s.lo < s.hi)
    SELECT e.seq FROM ${q}audit_events AS e WHERE e.organization = @organization
      AND e.seq >= (SELECT lo FROM search WHERE lo >= hi) ORDER BY e.seq LIMIT 1`;
}

/**
 * Pruning: the oldest events of one organization (`organization`, a parameter or a column of an
 * outer query), walked by the primary key in seq order from the first stored one and stopping at
 * the first whose time is not before @before, or after @limit rows. Reads at most @limit + 1 rows,
 * one when nothing is old: no scan of the organization's trail. The time is the digested body's
 * (`bodyAt`, the dialect's JSON read of `$.at`), never the `at` column, which no digest covers: an
 * edited column must not make recent events look old (found from outside). The rows come with
 * their bodies, so the caller prunes only those that match their digest (`verifiedPrefix`).
 */
export function oldestSql(q: string, organization: string, bodyAt: (alias: string) => string): string {
  return `WITH RECURSIVE walk(organization, seq, digest, body, n) AS (
      SELECT e.organization, e.seq, e.digest, e.body, 1 FROM ${q}audit_events AS e
        WHERE e.organization = ${organization} AND ${bodyAt("e")} < @before
          AND e.seq = (SELECT f.seq FROM ${q}audit_events AS f WHERE f.organization = ${organization} ORDER BY f.seq LIMIT 1)
      UNION ALL
      SELECT e.organization, e.seq, e.digest, e.body, w.n + 1 FROM walk AS w
        JOIN ${q}audit_events AS e ON e.organization = w.organization AND e.seq = w.seq + 1
        WHERE ${bodyAt("e")} < @before AND w.n < @limit)
    SELECT organization, seq, digest, body FROM walk`;
}
