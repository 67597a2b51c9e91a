import type { Page } from "../../src/schemas/records.js";
import type { TeamProjectRecord } from "../../src/schemas/team-projects.js";
import type { TeamProjectListFilter, TeamProjectStore } from "../../src/storage/types.js";
import { clone } from "./clone.js";

const byCreation = (a: TeamProjectRecord, b: TeamProjectRecord): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

const passes = (filter: TeamProjectListFilter, r: TeamProjectRecord): boolean =>
  (filter.teamIds === undefined || filter.teamIds.includes(r.teamId)) && (filter.teamId === undefined || filter.teamId === r.teamId);

/**
 * Team-project grants in memory. Like the rest of the memory adapter, every method finishes inside
 * one synchronous step, so each check-and-write is atomic without locks.
 */
export function createMemoryTeamProjectStore(): TeamProjectStore {
  const rows = new Map<string, TeamProjectRecord>();
  const ofProject = (projectId: string): TeamProjectRecord[] =>
    [...rows.values()].filter((r) => r.projectId === projectId).sort(byCreation);
  const removeWhere = (match: (r: TeamProjectRecord) => boolean): number => {
    let removed = 0;
    for (const [id, row] of rows) if (match(row) && rows.delete(id)) removed++;
    return removed;
  };

  return {
    async insert(record) {
      if (rows.has(record.id)) throw new Error("team-project id already exists");
      const taken = [...rows.values()].some((r) => r.teamId === record.teamId && r.projectId === record.projectId);
      if (taken) return { ok: false, reason: "duplicate" };
      rows.set(record.id, clone(record));
      return { ok: true };
    },
    async get(id) {
      const row = rows.get(id);
      return row === undefined ? null : clone(row);
    },
    async listByProject(projectId, filter, page): Promise<Page<TeamProjectRecord>> {
      const all = ofProject(projectId).filter((r) => passes(filter, r));
      return { items: all.slice(page.offset, page.offset + page.limit).map(clone), total: all.length };
    },
    async listForTeams(projectId, teamIds) {
      return ofProject(projectId).filter((r) => teamIds.includes(r.teamId)).map(clone);
    },
    async update(record, expectedUpdatedAt) {
      const row = rows.get(record.id);
      const same = row && row.teamId === record.teamId && row.projectId === record.projectId && row.organization === record.organization;
      if (!row || !same) return { ok: false, reason: "missing" };
      if (row.updatedAt !== expectedUpdatedAt) return { ok: false, reason: "stale" };
      rows.set(record.id, clone({ ...record, createdAt: row.createdAt }));
      return { ok: true };
    },
    async delete(id) {
      return rows.delete(id);
    },
    deleteByTeam: async (teamId) => removeWhere((r) => r.teamId === teamId),
    deleteByProject: async (projectId) => removeWhere((r) => r.projectId === projectId),
  };
}
