import type { QuerySpec, RouteQuery } from "./query.js";
import type { HttpApp, Route } from "./types.js";

/**
 * decision D7: the URL the links of a response are built on. Nothing of it is copied from the
 * request as sent: the origin is the configured `publicUrl` (as `log-read-url` is, D32), never the
 * Host header; the path is the route's own with its parameters, whatever spelling of it matched;
 * the query holds only the parameters the route accepts, as the router validated them (D30), ordered
 * by name: a credential or anything else a client appended is never echoed, and the include list is
 * the canonical one, each name once, so a link is bounded by the route's vocabulary. The page
 * parameters are set per link (`paginationDocument`).
 */
export function linkUrl(app: HttpApp, route: Route, params: Readonly<Record<string, string>>, query: RouteQuery): URL {
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
  const url = new URL(`${app.services.runTasks.settings.publicUrl}${app.basePath}${path}`);
  const spec = route.query ?? {};
  const include = includeValue(spec, query.includes);
  if (include !== "") url.searchParams.set("include", include);
  for (const { name } of spec.filters ?? []) {
    const value = query.filters[name];
    if (value !== undefined) url.searchParams.set(name, value);
  }
  if (query.sort !== undefined) url.searchParams.set("sort", query.sort);
  url.searchParams.sort();
  return url;
}

/** The canonical include names, each written in a spelling the route accepts, sorted. */
function includeValue(spec: QuerySpec, includes: ReadonlySet<string>): string {
  const table = spec.include ?? {};
  const spelling = (name: string): string =>
    Object.hasOwn(table, name) ? name : (Object.keys(table).find((key) => table[key] === name) ?? name);
  return [...includes].map(spelling).sort().join(",");
}
