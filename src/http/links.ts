import type { HttpApp, Route } from "./types.js";

/**
 * decision D7: the URL the links of a response are built on. Nothing of it comes from the request as
 * sent: the origin is the configured `publicUrl` (as `log-read-url` is, D32), never the Host header,
 * and the path is the route's own with its parameters, whatever spelling of it matched.
 */
export function linkUrl(app: HttpApp, route: Route, params: Readonly<Record<string, string>>, request: URL): URL {
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
  const url = new URL(`${app.services.runTasks.settings.publicUrl}${app.basePath}${path}`);
  url.search = request.search;
  return url;
}
