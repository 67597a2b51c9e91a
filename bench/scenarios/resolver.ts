import { resolveProjectAccess } from "../../src/domain/permissions.js";
import { impliedPermissions } from "../../src/domain/permissions.js";
import type { Principal } from "../../src/schemas/common.js";
import type { Team } from "../../src/schemas/directory.js";
import type { TeamProjectRecord } from "../../src/schemas/team-projects.js";
import { alternate } from "../lib/stats.js";
import type { Scenario } from "./types.js";

const LEVELS = ["read", "write", "maintain", "admin", "custom", "read"] as const;

/** Calls per second over a fixed time slice. */
function rate(fn: () => unknown, ms = 500): number {
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) for (let i = 0; i < 1000; i++, n++) fn();
  return n / (ms / 1000);
}

/** `resolveProjectAccess` for a principal in 6 teams against a plain object lookup loop. */
const resolverScenario: Scenario = {
  name: "Resolver",
  async run(samples) {
    const teams: Team[] = LEVELS.map((_, i) => ({ id: `team-${i}`, name: `t${i}`, organization: "o", visibility: "secret", orgPermissions: [], members: ["user-1"], owners: false }));
    const grants: TeamProjectRecord[] = LEVELS.map((access, i) => {
      const p = impliedPermissions(access);
      return { id: `tprj-${i}`, teamId: `team-${i}`, projectId: "prj-1", organization: "o", access, projectAccess: p.projectAccess, workspaceAccess: p.workspaceAccess, createdAt: "", updatedAt: "" };
    });
    const principal: Principal = { organization: "o", kind: "user", userId: "user-1", teamIds: teams.map((t) => t.id), isOwner: false, orgPermissions: [] };
    const project = { id: "prj-1", name: "p", organization: "o" };
    const table: Record<string, number> = Object.fromEntries(grants.map((g, i) => [g.id, i]));
    let sink = 0;
    const r = await alternate(
      samples,
      async () => rate(() => resolveProjectAccess({ principal, teams, grants, project })),
      async () => rate(() => {
        for (const g of grants) sink += table[g.id]!;
      }),
    );
    if (sink === -1) console.log(sink);
    return { name: "Resolver", unit: "calls/s", ...r, ratio: r.subject.median / r.baseline.median, target: "reported", notes: "6 teams, one grant each" };
  },
};

export const scenarios: Scenario[] = [resolverScenario];
