import type { HttpMethod, Route } from "./types.js";

export type RouteMatch =
  | { kind: "found"; route: Route; params: Record<string, string> }
  | { kind: "method-not-allowed"; allowed: HttpMethod[] }
  | { kind: "not-found" };

interface Compiled {
  route: Route;
  segments: string[];
}

/**
 * A small segment matcher: routes are few and fixed, so a linear scan over pre-split paths is fast
 * and keeps matching rules obvious (a `:name` segment matches exactly one non-empty segment).
 * Paths are compared by their non-empty segments, so a trailing slash names the same route on
 * every route of the API (an upstream integration reads `GET /runs/:id/`).
 */
export function createRouter(routes: readonly Route[]) {
  const compiled: Compiled[] = routes.map((route) => ({ route, segments: route.path.split("/").filter(Boolean) }));

  const matchSegments = (pattern: string[], actual: string[]): Record<string, string> | null => {
    if (pattern.length !== actual.length) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < pattern.length; i++) {
      const p = pattern[i]!;
      const a = actual[i]!;
      if (p.startsWith(":")) {
        let value: string;
        try {
          value = decodeURIComponent(a);
        } catch {
          return null;
        }
        // No stored id or name holds NUL (PostgreSQL text cannot): such a path names nothing.
        if (value === "" || value.includes("\u0000")) return null;
        params[p.slice(1)] = value;
      } else if (p !== a) return null;
    }
    return params;
  };

  return {
    match(method: string, path: string): RouteMatch {
      const actual = path.split("/").filter(Boolean);
      const allowed: HttpMethod[] = [];
      for (const c of compiled) {
        const params = matchSegments(c.segments, actual);
        if (!params) continue;
        if (c.route.method === method) return { kind: "found", route: c.route, params };
        allowed.push(c.route.method);
      }
      return allowed.length > 0 ? { kind: "method-not-allowed", allowed } : { kind: "not-found" };
    },
  };
}
