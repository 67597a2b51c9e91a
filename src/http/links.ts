import { acceptedParameters } from "./query.js";
import type { HttpApp, Route } from "./types.js";

/**
 * decision D7: the URL the links of a response are built on. Nothing of it comes from the request as
 * sent: the origin is the configured `publicUrl` (as `log-read-url` is, D32), never the Host header,
 * the path is the route's own with its parameters, whatever spelling of it matched, and the query
 * holds only the parameters the route accepts, in alphabetical order (a credential or anything else
 * a client appended is never echoed). The page parameters are set per link (`paginationDocument`).
 */
export function linkUrl(app: HttpApp, route: Route, params: Readonly<Record<string, string>>, request: URL): URL {
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
  const url = new URL(`${app.services.runTasks.settings.publicUrl}${app.basePath}${path}`);
  for (const name of acceptedParameters(route.query).sort()) {
    for (const value of request.searchParams.getAll(name)) url.searchParams.append(name, value);
  }
  return url;
}
