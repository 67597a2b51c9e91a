import { describe, expect, it } from "vitest";
import * as runplane from "../src/index.js";

describe("the package entry exports the pure rules for hosts' own tests", () => {
  it("resolves a principal's project access and decides actions with reasons", () => {
    const principal: runplane.Principal = { organization: "o", kind: "user", userId: "user-1", teamIds: ["team-1"], isOwner: false, orgPermissions: [] };
    const team = { id: "team-1", name: "devs", organization: "o", visibility: "secret" as const, orgPermissions: [], members: ["user-1"], owners: false };
    const implied = runplane.impliedPermissions("write");
    const grant: runplane.TeamProjectRecord = {
      id: "tprj-1",
      teamId: "team-1",
      projectId: "prj-1",
      organization: "o",
      access: "write",
      ...implied,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
    };
    const effective = runplane.resolveProjectAccess({ principal, teams: [team], grants: [grant], project: { id: "prj-1", name: "p", organization: "o" } });
    expect(runplane.can(effective, "variables:write").allowed).toBe(true);
    const denied = runplane.can(effective, "team-access:manage");
    expect(denied.allowed).toBe(false);
  });

  it("computes stage status from results (D13) and signs request bytes (D14)", () => {
    expect(runplane.stageStatusOf([{ status: "failed", enforcementLevel: "advisory" }], { overridable: false, started: true })).toBe("passed");
    expect(runplane.stageStatusOf([{ status: "failed", enforcementLevel: "mandatory" }], { overridable: false, started: true })).toBe("failed");
    const bytes = new TextEncoder().encode("{}");
    const signature = runplane.signPayload(bytes, "key");
    expect(signature).toMatch(/^[0-9a-f]{128}$/);
    expect(runplane.verifySignature(bytes, signature, "key")).toBe(true);
    expect(runplane.signatureHeaderValue(bytes, null)).toBe("");
  });
});

describe("the package entry exports the documented API only", () => {
  it("has exactly these runtime exports; internals such as failpoints and transition functions stay inside", () => {
    expect(Object.keys(runplane).sort()).toEqual(
      [
        "ApiError",
        "EgressError",
        "RunplaneOptionsError",
        "StorageUnavailableError",
        "buildRunTaskRequest",
        "can",
        "createConsoleLogger",
        "createDispatcher",
        "createEgress",
        "createKeyring",
        "createResultsPage",
        "createRunplane",
        "generateKey",
        "impliedPermissions",
        "isApiError",
        "isEgressError",
        "isStorageUnavailableError",
        "resolveProjectAccess",
        "signPayload",
        "signatureHeaderValue",
        "silentLogger",
        "stageStatusOf",
        "verifySignature",
      ].sort(),
    );
    expect(runplane).not.toHaveProperty("DISPATCHER_FAILPOINTS");
    expect(runplane).not.toHaveProperty("transitionResult");
  });

  it("keeps the storage contract for adapter authors at runplane/storage, types only", async () => {
    const storage = await import("../src/storage/index.js");
    expect(Object.keys(storage)).toEqual([]);
    const contract: import("../src/storage/index.js").VariableRecord | undefined = undefined;
    expect(contract).toBeUndefined();
  });
});
