import type { Runplane } from "../../src/index.js";

/** Fixed ids of the demo records, so the printed curl lines and docs can name them. */
export const DEMO = {
  organization: "demo",
  project: "prj-demo",
  workspace: "ws-demo",
  workspaceName: "demo-workspace",
  ownersTeam: "team-owners",
  devsTeam: "team-devs",
  user: "user-demo",
  policySet: "polset-demo",
  agentPool: "apool-demo",
} as const;

/**
 * The records API tokens need (the organization, the demo user, the owners and devs teams), for
 * `runplane token create` on a database the server never started on. Not the workspace: its
 * creation marks the demo's one seeding (`seedDemo`).
 */
export async function seedDemoOwners(runplane: Runplane): Promise<void> {
  const d = runplane.directory;
  if (!(await d.organizations.get(DEMO.organization))) await d.organizations.create({ name: DEMO.organization, email: "demo@example.com" });
  if (!(await d.users.get(DEMO.user))) await d.users.create({ id: DEMO.user, username: "demo" });
  if (!(await d.teams.get(DEMO.ownersTeam))) {
    await d.teams.create({ id: DEMO.ownersTeam, name: "owners", organization: DEMO.organization, visibility: "organization", members: [DEMO.user] });
  }
  if (!(await d.teams.get(DEMO.devsTeam))) {
    await d.teams.create({ id: DEMO.devsTeam, name: "devs", organization: DEMO.organization, visibility: "organization" });
  }
}

/**
 * Creates the demo records on a database's first start; later starts find them and change
 * nothing. Resolves true when this call created the demo workspace: decision D52, the demo run
 * tasks are created and attached then only, so tasks a user deleted or detached stay so.
 */
export async function seedDemo(runplane: Runplane): Promise<boolean> {
  const d = runplane.directory;
  await seedDemoOwners(runplane);
  if (!(await d.projects.get(DEMO.project))) await d.projects.create({ id: DEMO.project, name: "Demo project", organization: DEMO.organization });
  const first = !(await d.workspaces.get(DEMO.workspace));
  if (first) {
    await d.workspaces.create({
      id: DEMO.workspace,
      name: DEMO.workspaceName,
      organization: DEMO.organization,
      projectId: DEMO.project,
      workingDirectory: "",
    });
  }
  if (!(await d.policySets.get(DEMO.policySet))) {
    await d.policySets.create({ id: DEMO.policySet, name: "demo-guardrails", organization: DEMO.organization, kind: "sentinel" });
  }
  if (!(await d.agentPools.get(DEMO.agentPool))) await d.agentPools.create({ id: DEMO.agentPool, name: "demo-pool", organization: DEMO.organization });
  return first;
}
