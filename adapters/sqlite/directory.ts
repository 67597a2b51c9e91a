import type { Team } from "../../src/schemas/directory.js";
import type { AgentStore, DirectoryStore, TeamStore } from "../../src/storage/types.js";
import { buildDirectoryStores, keyedSql, TEAMS, type DirectoryStores, type KeyedStore, type TableSpec } from "../sql/directory-tables.js";
import { fromTeamRow, type TeamRow } from "../sql/rows.js";
import { createAgentStore } from "./agents.js";
import type { SqliteDatabase } from "./driver.js";
import { immediateTx } from "./driver.js";

/** get/insert/replace/delete by primary key; every statement prepared once, every write IMMEDIATE. */
function createKeyedStore<T, Row>(db: SqliteDatabase, spec: TableSpec<T, Row>): KeyedStore<T> {
  const sql = keyedSql(spec);
  const select = db.prepare(sql.get);
  const insert = db.prepare(sql.insert);
  const update = db.prepare(sql.update);
  const remove = db.prepare(sql.delete);
  const write = immediateTx(db, (statement: typeof insert, row: Row) => statement.run(row).changes === 1);
  const removeTx = immediateTx(db, (key: string) => remove.run({ key }).changes === 1);
  return {
    async get(key) {
      const row = select.get({ key }) as Row | undefined;
      return row ? spec.fromRow(row) : null;
    },
    insert: async (record) => write(insert, spec.toRow(record)),
    replace: async (record) => write(update, spec.toRow(record)),
    delete: async (key) => removeTx(key),
  };
}

function createDirectoryStore<T extends { id: string; organization: string }, Row>(
  db: SqliteDatabase,
  spec: TableSpec<T, Row>,
): DirectoryStore<T> {
  const byOrganization = db.prepare(keyedSql(spec).byOrganization);
  return {
    ...createKeyedStore(db, spec),
    async listByOrganization(organization) {
      return (byOrganization.all({ organization }) as Row[]).map(spec.fromRow);
    },
  };
}

/**
 * An index walk by user (already in team id order, so no sort), then one primary-key lookup per
 * team. CROSS JOIN pins that loop order: without ANALYZE statistics the planner would rather scan
 * the organization's teams. Exported for the adapter tests' query-plan check.
 */
export const TEAMS_BY_MEMBER_SQL = `SELECT t.* FROM team_members m CROSS JOIN teams t ON t.id = m.team_id
  WHERE m.user_id = ? AND t.organization = ? ORDER BY m.team_id`;

/**
 * Teams keep `members` as given in a JSON column (the record comes back unchanged) and mirror it
 * into `team_members` in the same transaction, so `listByMember` is an indexed join.
 */
function createTeamStore(db: SqliteDatabase): TeamStore {
  const base = createDirectoryStore(db, TEAMS);
  const sql = keyedSql(TEAMS);
  const insertTeam = db.prepare(sql.insert);
  const updateTeam = db.prepare(sql.update);
  const deleteTeam = db.prepare(sql.delete);
  const clearMembers = db.prepare(`DELETE FROM team_members WHERE team_id = ?`);
  const addMember = db.prepare(`INSERT OR IGNORE INTO team_members (team_id, user_id) VALUES (?, ?)`);
  const byMember = db.prepare(TEAMS_BY_MEMBER_SQL);

  const writeMembers = (team: Team): void => {
    clearMembers.run(team.id);
    for (const userId of team.members) addMember.run(team.id, userId);
  };
  const write = (statement: typeof insertTeam) =>
    immediateTx(db, (team: Team) => {
      if (statement.run(TEAMS.toRow(team)).changes !== 1) return false;
      writeMembers(team);
      return true;
    });
  const insert = write(insertTeam);
  const replace = write(updateTeam);
  const remove = immediateTx(db, (key: string) => {
    clearMembers.run(key);
    return deleteTeam.run({ key }).changes === 1;
  });

  return {
    get: base.get,
    listByOrganization: base.listByOrganization,
    insert: async (team) => insert(team),
    replace: async (team) => replace(team),
    delete: async (id) => remove(id),
    async listByMember(organization, userId) {
      return (byMember.all(userId, organization) as TeamRow[]).map(fromTeamRow);
    },
  };
}

export type { DirectoryStores } from "../sql/directory-tables.js";

/** The directory's stores, and the agents of its agent pools (D34), which are built beside the pools. */
export function createDirectoryStores(db: SqliteDatabase): DirectoryStores & { agents: AgentStore } {
  const stores = buildDirectoryStores({
    keyed: (spec) => createKeyedStore(db, spec),
    keys: (spec) => {
      const all = db.prepare(keyedSql(spec).keys);
      return async () => (all.all() as { key: string }[]).map((row) => row.key);
    },
    listed: (spec) => createDirectoryStore(db, spec),
    teams: () => createTeamStore(db),
  });
  return { ...stores, agents: createAgentStore(db) };
}
