import { badRequest, quote } from "../errors.js";
import { PAGE_PARAMETERS, parsePage, type PageParams } from "./pagination.js";

/**
 * What a route accepts in its query string. The router parses and validates all of it before the
 * route's handler runs and hands the handler only the result (decision D30), so no route can write
 * first and refuse a parameter afterwards. Parameters a route does not declare are ignored.
 */
export interface QuerySpec {
  /** decision D8: every accepted spelling of an `include` name -> the name the route reads. */
  include?: Readonly<Record<string, string>>;
  /** decision D7: `always` paged (defaults apply); `optional`: paged only when a page parameter is given. */
  page?: "always" | "optional";
  /** Plain string parameters such as filters; a `required` one missing or empty is 400. */
  filters?: readonly { name: string; required?: boolean }[];
  /** The values `sort` accepts; anything else is 400. */
  sort?: readonly string[];
}

/** The validated query a handler reads instead of the raw search parameters. */
export interface RouteQuery {
  /** Canonical include names, with every resource along an included path (JSON:API). */
  includes: ReadonlySet<string>;
  /** Null when the route is unpaged, or `optional` and no page parameter was given. */
  page: PageParams | null;
  filters: Readonly<Partial<Record<string, string>>>;
  sort: string | undefined;
}

/** The parameter names a spec accepts: what the route's OpenAPI operation must document, no more. */
export function acceptedParameters(spec: QuerySpec = {}): string[] {
  return [
    ...(spec.include ? ["include"] : []),
    ...(spec.page ? PAGE_PARAMETERS : []),
    ...(spec.filters ?? []).map((f) => f.name),
    ...(spec.sort ? ["sort"] : []),
  ];
}

/** decision D8: anything not in the table is 400 `Invalid include parameter`. */
function parseIncludes(table: Readonly<Record<string, string>>, query: URLSearchParams): Set<string> {
  const wanted = new Set<string>();
  for (const raw of query.getAll("include").flatMap((v) => v.split(","))) {
    const name = raw.trim();
    if (name === "") continue;
    // Own keys only: `constructor` or `__proto__` must not pass as an include.
    const include = Object.hasOwn(table, name) ? table[name] : undefined;
    if (include === undefined) throw badRequest(`Invalid include parameter: ${quote(name)}`, "include");
    wanted.add(include);
  }
  // JSON:API: including a path (`run.workspace`) includes every resource along it (`run`).
  const canonical = new Set(Object.values(table));
  for (const path of [...wanted]) {
    const parts = path.split(".");
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join(".");
      if (canonical.has(prefix)) wanted.add(prefix);
    }
  }
  return wanted;
}

function parseSort(accepted: readonly string[], query: URLSearchParams): string | undefined {
  const values = query.getAll("sort");
  for (const value of values) if (!accepted.includes(value)) throw badRequest(`Invalid sort parameter: ${quote(value)}`, "sort");
  return values[0];
}

function parseFilters(filters: NonNullable<QuerySpec["filters"]>, query: URLSearchParams): Partial<Record<string, string>> {
  const out: Partial<Record<string, string>> = {};
  for (const { name, required } of filters) {
    const value = query.get(name);
    if (required && !value) throw badRequest(`${name} is required`, name);
    if (value !== null) out[name] = value;
  }
  return out;
}

/** decision D30: the whole query of a request, validated against its route's spec before the handler runs. */
export function parseQuery(spec: QuerySpec = {}, query: URLSearchParams): RouteQuery {
  return {
    includes: spec.include ? parseIncludes(spec.include, query) : new Set(),
    page: spec.page ? parsePage(query, { optional: spec.page === "optional" }) : null,
    filters: parseFilters(spec.filters ?? [], query),
    sort: spec.sort ? parseSort(spec.sort, query) : undefined,
  };
}
