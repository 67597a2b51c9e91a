import type { VarOwner } from "../../src/schemas/records.js";
import { DIRECTORY_SCOPE, variablesScope, type RevisionStore } from "../../src/storage/revisions.js";
import type { Storage } from "../../src/storage/types.js";

type AnyFn = (...args: any[]) => Promise<unknown>;

/**
 * Adds `revisions` to a memory storage by wrapping its writers: each bumps its scope after the write
 * has happened (the contract allows after, never before). Counters only grow.
 */
export function withRevisions(storage: Omit<Storage, "revisions">): Storage {
  const counters = new Map<string, number>();
  const bump = (scope: string) => counters.set(scope, (counters.get(scope) ?? 0) + 1);

  const wrap = <S extends object>(store: S, methods: readonly (keyof S & string)[], scopesOf: (args: any[]) => string[]): S => {
    const wrapped = { ...store } as Record<string, AnyFn>;
    for (const name of methods) {
      const inner = (store as Record<string, AnyFn>)[name]!.bind(store);
      wrapped[name] = async (...args: any[]) => {
        const result = await inner(...args);
        for (const scope of scopesOf(args)) bump(scope);
        return result;
      };
    }
    return wrapped as S;
  };
  const directory = () => [DIRECTORY_SCOPE];
  const keyed = ["insert", "replace", "delete"] as const;
  // A re-encrypted value names no owner: every variables scope is bumped (more than needed is allowed).
  const allVariableScopes = () => [...counters.keys()].filter((scope) => scope.startsWith("vars:"));
  const ownerOf = (args: any[]) => [variablesScope(args[0] as VarOwner)];
  const recordOwner = (args: any[]) => {
    const record = args[0] as { ownerKind: VarOwner["kind"]; ownerId: string };
    return [variablesScope({ kind: record.ownerKind, id: record.ownerId })];
  };

  const revisions: RevisionStore = {
    async read(scopes) {
      return scopes.map((scope) => counters.get(scope) ?? 0);
    },
  };
  return {
    ...storage,
    organizations: wrap(storage.organizations, keyed, directory),
    projects: wrap(storage.projects, keyed, directory),
    workspaces: wrap(storage.workspaces, keyed, directory),
    teams: wrap(storage.teams, keyed, directory),
    users: wrap(storage.users, keyed, directory),
    policySets: wrap(storage.policySets, keyed, directory),
    agentPools: wrap(storage.agentPools, keyed, directory),
    apiTokens: wrap(storage.apiTokens, ["insert", "delete"], directory),
    teamProjects: wrap(storage.teamProjects, ["insert", "update", "delete", "deleteByTeam", "deleteByProject"], directory),
    variables: wrap(wrap(storage.variables, ["insert", "update"], recordOwner), ["delete", "deleteByOwner"], ownerOf),
    sealedValues: wrap(storage.sealedValues, ["replace"], (args) => (args[0] === "vars.value" ? allVariableScopes() : [])),
    revisions,
    close: storage.close.bind(storage),
  };
}
