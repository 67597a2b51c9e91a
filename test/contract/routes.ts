import { ROUTE_PERMISSIONS } from "../../src/http/route-permissions.js";

/** The route table's key (`GET /runs/:run_id`) that a request matches, or null. */
export function routeKeyOf(method: string, path: string): string | null {
  const segments = path.split("?")[0]!.replace(/\/$/, "").split("/").filter(Boolean);
  for (const key of Object.keys(ROUTE_PERMISSIONS)) {
    const [m, pattern] = key.split(" ") as [string, string];
    if (m !== method) continue;
    const parts = pattern.split("/").filter(Boolean);
    if (parts.length === segments.length && parts.every((p, i) => p.startsWith(":") || p === segments[i])) return key;
  }
  return null;
}

export const allRouteKeys = (): string[] => Object.keys(ROUTE_PERMISSIONS);
