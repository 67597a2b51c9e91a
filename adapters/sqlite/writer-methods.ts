import type { Storage } from "../../src/storage/types.js";

/** Where a storage method runs in the writer thread mode (decision D37). */
export type MethodAccess = "read" | "write";

type StoreName = Exclude<keyof Storage, "close" | "listen" | "changes" | "relay" | "writesUnavailable" | "ping">;
type MethodsOf<T> = { -readonly [M in keyof T as NonNullable<T[M]> extends (...args: never[]) => unknown ? M : never]-?: MethodAccess };

/**
 * Every method of every store, and whether it writes. Typed against the `Storage` contract, so a
 * method added there does not compile until it is listed here: a write the table forgot would run
 * on the main thread's connection, which is `query_only` and refuses it.
 */
export const METHOD_ACCESS: { [S in StoreName]-?: MethodsOf<NonNullable<Storage[S]>> } = {
  organizations: { get: "read", names: "read", insert: "write", replace: "write", delete: "write" },
  users: { get: "read", insert: "write", replace: "write", delete: "write" },
  projects: { get: "read", listByOrganization: "read", insert: "write", replace: "write", delete: "write" },
  workspaces: { get: "read", listByOrganization: "read", insert: "write", replace: "write", delete: "write" },
  teams: { get: "read", listByOrganization: "read", listByMember: "read", insert: "write", replace: "write", delete: "write" },
  policySets: { get: "read", listByOrganization: "read", insert: "write", replace: "write", delete: "write" },
  agentPools: { get: "read", listByOrganization: "read", insert: "write", replace: "write", delete: "write" },
  apiTokens: { get: "read", findByDigest: "read", list: "read", insert: "write", touch: "write", delete: "write" },
  variables: { list: "read", get: "read", insert: "write", update: "write", delete: "write", deleteByOwner: "write" },
  sealedValues: { scan: "read", replace: "write" },
  agentTokens: { get: "read", listByPool: "read", findByDigest: "read", insert: "write", touch: "write", delete: "write" },
  agents: { get: "read", listByPool: "read", insert: "write", ping: "write", setStatus: "write", delete: "write", prune: "write" },
  teamProjects: {
    get: "read",
    listByProject: "read",
    listForTeams: "read",
    insert: "write",
    update: "write",
    delete: "write",
    deleteByTeam: "write",
    deleteByProject: "write",
  },
  comments: { get: "read", listByRun: "read", insert: "write" },
  hosts: { list: "read", beat: "write", remove: "write", prune: "write" },
  runTasks: { get: "read", getMany: "read", list: "read", countByAgentPool: "read", insert: "write", update: "write", delete: "write" },
  workspaceTasks: { get: "read", list: "read", listByTask: "read", insert: "write", update: "write", delete: "write" },
  runs: { get: "read", findByArtifact: "read", listByArtifact: "read", listByWorkspace: "read", create: "write" },
  taskStages: { get: "read", getByRun: "read", listByRun: "read", listUnsettled: "read", transition: "write", start: "write" },
  taskResults: { get: "read", listByStage: "read", findByTokenDigest: "read", listPastDeadline: "read", transition: "write" },
  taskResultOutcomes: { get: "read", list: "read", bodyBytes: "read" },
  // A claim leases rows (and opens deadline windows): a write, though it answers with rows.
  taskDeliveries: { get: "read", listByResult: "read", stats: "read", waitingByPool: "read", claim: "write", settle: "write", expedite: "write" },
  deliveryAttempts: { list: "read", prune: "write" },
  revisions: { read: "read" },
  audit: { list: "read", scan: "read", head: "read", organizations: "read", append: "write", prune: "write" },
};

/** True when `store.method` is a write of the table (the writer thread runs nothing else). */
export function isWriteMethod(store: string, method: string): boolean {
  const methods = (METHOD_ACCESS as Record<string, Record<string, MethodAccess> | undefined>)[store];
  return methods !== undefined && Object.hasOwn(methods, method) && methods[method] === "write";
}
