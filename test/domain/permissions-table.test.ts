import { describe, it, expect } from "vitest";
import { customPermissions, impliedPermissions, IMPLIED_PERMISSIONS } from "../../src/domain/permissions.js";
import {
  ProjectAccessInputSchema,
  TeamProjectCreateAttributesSchema,
  WorkspaceAccessInputSchema,
  fromWorkspaceAccessInput,
  toProjectAccessWire,
  toWorkspaceAccessWire,
} from "../../src/schemas/team-projects.js";

// Copied by hand from spec 4.6 ("Implied permission levels") plus decision D20's two extra rows.
// Columns: read, write, maintain, admin, custom default. Deliberately in wire names and shares no
// code with the table under test.
const SPEC_TABLE: Record<string, [unknown, unknown, unknown, unknown, unknown]> = {
  "project-access.settings": ["read", "read", "read", "delete", "read"],
  "project-access.teams": ["none", "none", "none", "manage", "none"],
  "project-access.variable-sets": ["none", "none", "none", "write", "none"],
  "workspace-access.runs": ["read", "apply", "apply", "apply", "read"],
  "workspace-access.sentinel-mocks": ["none", "read", "read", "read", "none"],
  "workspace-access.state-versions": ["read", "write", "write", "write", "none"],
  "workspace-access.variables": ["read", "write", "write", "write", "none"],
  "workspace-access.create": [false, false, true, true, false],
  "workspace-access.locking": [false, true, true, true, false],
  "workspace-access.delete": [false, false, true, true, false],
  "workspace-access.move": [false, false, false, true, false],
  "workspace-access.run-tasks": [false, false, true, true, false],
  "workspace-access.policy-overrides": [false, false, false, true, false],
};
const COLUMNS = ["read", "write", "maintain", "admin", "custom"] as const;

function wireCell(level: (typeof COLUMNS)[number], row: string): unknown {
  const set = impliedPermissions(level);
  const [group, name] = row.split(".") as [string, string];
  const wire: Record<string, unknown> =
    group === "project-access" ? toProjectAccessWire(set.projectAccess) : toWorkspaceAccessWire(set.workspaceAccess);
  return wire[name];
}

describe("implied permission table", () => {
  for (const [row, cells] of Object.entries(SPEC_TABLE)) {
    COLUMNS.forEach((level, i) => {
      it(`gives ${row} = ${String(cells[i])} for access ${level}`, () => {
        expect(wireCell(level, row)).toBe(cells[i]);
      });
    });
  }

  it("has no permission the reference table does not list", () => {
    for (const level of COLUMNS) {
      const set = impliedPermissions(level);
      const rows = [
        ...Object.keys(toProjectAccessWire(set.projectAccess)).map((k) => `project-access.${k}`),
        ...Object.keys(toWorkspaceAccessWire(set.workspaceAccess)).map((k) => `workspace-access.${k}`),
      ];
      expect(rows.sort()).toEqual(Object.keys(SPEC_TABLE).sort());
    }
  });

  it("hands out copies that cannot change the table", () => {
    const set = impliedPermissions("read");
    set.workspaceAccess.variables = "write";
    expect(impliedPermissions("read").workspaceAccess.variables).toBe("read");
    expect(IMPLIED_PERMISSIONS.read.workspaceAccess.variables).toBe("read");
  });
});

describe("custom permissions", () => {
  it("fill every unnamed permission with the custom defaults", () => {
    const set = customPermissions({ workspaceAccess: { runs: "plan", locking: true } });
    expect(toWorkspaceAccessWire(set.workspaceAccess)).toEqual({
      runs: "plan",
      "sentinel-mocks": "none",
      "state-versions": "none",
      variables: "none",
      create: false,
      locking: true,
      delete: false,
      move: false,
      "run-tasks": false,
      "policy-overrides": false,
    });
    expect(toProjectAccessWire(set.projectAccess)).toEqual({ settings: "read", teams: "none", "variable-sets": "none" });
  });

  it("keep the stored permissions they do not name when given a base (custom-to-custom PATCH)", () => {
    const stored = customPermissions({ projectAccess: { teams: "read" }, workspaceAccess: { variables: "write" } });
    const next = customPermissions({ workspaceAccess: { runs: "apply" } }, stored);
    expect(next.projectAccess.teams).toBe("read");
    expect(next.workspaceAccess.variables).toBe("write");
    expect(next.workspaceAccess.runs).toBe("apply");
  });

  it("treat an explicit undefined as not named", () => {
    const set = customPermissions({ workspaceAccess: { runs: undefined } });
    expect(set.workspaceAccess.runs).toBe("read");
  });
});

describe("team-project request pieces", () => {
  it("reject an unknown permission key", () => {
    expect(WorkspaceAccessInputSchema.safeParse({ run_tasks: true }).success).toBe(false);
    expect(ProjectAccessInputSchema.safeParse({ settings: "read", owner: true }).success).toBe(false);
  });

  it("reject a value outside a permission's levels", () => {
    expect(ProjectAccessInputSchema.safeParse({ teams: "write" }).success).toBe(false);
    expect(WorkspaceAccessInputSchema.safeParse({ "state-versions": "read_outputs" }).success).toBe(false);
  });

  it("accept partial objects and convert them to internal names", () => {
    const parsed = WorkspaceAccessInputSchema.parse({ "run-tasks": true, "state-versions": "read-outputs" });
    expect(fromWorkspaceAccessInput(parsed)).toEqual({ runTasks: true, stateVersions: "read-outputs" });
  });

  it("require access on create and point at the permission that is wrong", () => {
    expect(TeamProjectCreateAttributesSchema.safeParse({}).success).toBe(false);
    const bad = TeamProjectCreateAttributesSchema.safeParse({ access: "custom", "workspace-access": { runs: "destroy" } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["workspace-access", "runs"]);
  });
});
