import type { Team } from "../../src/schemas/directory.js";
import type { DirectoryStore, TeamStore } from "../../src/storage/types.js";
import { buildDirectoryStores, keyedSql, TEAMS, type DirectoryStores, type KeyedStore, type TableSpec } from "../sql/directory-tables.js";
import { fromTeamRow, type TeamRow } from "../sql/rows.js";
import { columnList } from "../sql/statements.js";
import type { PgPoolLike, Queryable } from "./driver.js";
import { changed, rowsOf, sql, transaction } from "./driver.js";
import { createReadGroup } from "./read-group.js";

/** The statements of one table, schema-qualified and compiled once. */
function statementsOf<T, Row>(q: string, spec: TableSpec<T, Row>) {
  const text = keyedSql(spec, `${q}${spec.table}`);
  return {
    // By any number of keys at once (read-group.ts).
    get: sql(text.get.replace(`= @key`, `= ANY(@keys::text[])`)),
    insert: sql(text.insert),
    update: sql(text.update),
    delete: sql(text.delete),
    byOrganization: sql(text.byOrganization),
    keys: sql(text.keys),
  };
}

function createKeyedStore<T, Row>(pool: PgPoolLike, q: string, spec: TableSpec<T, Row>): KeyedStore<T> {
  const s = statementsOf(q, spec);
  // Per event-loop turn, not per microtask run: every API request reads its team, workspace and
  // project to authorize, and the requests of one turn then share one statement per table.
  const read = createReadGroup<Row>(pool, s.get, (row) => String(row[spec.key]), setImmediate);
  return {
    async get(key) {
      const [row] = await read(key);
      return row ? spec.fromRow(row) : null;
    },
    insert: async (record) => (await changed(pool, s.insert, spec.toRow(record) as object)) === 1,
    replace: async (record) => (await changed(pool, s.update, spec.toRow(record) as object)) === 1,
    delete: async (key) => (await changed(pool, s.delete, { key })) === 1,
  };
}

function createDirectoryStore<T extends { id: string; organization: string }, Row>(
  pool: PgPoolLike,
  q: string,
  spec: TableSpec<T, Row>,
): DirectoryStore<T> {
  const { byOrganization } = statementsOf(q, spec);
  return {
    ...createKeyedStore(pool, q, spec),
    listByOrganization: async (organization) => (await rowsOf<Row>(pool, byOrganization, { organization })).map(spec.fromRow),
  };
}

/**
 * Teams keep `members` as given in a JSON column (the record comes back unchanged) and mirror it
 * into `team_members` in the same transaction, so `listByMember` is an indexed join. The team's
 * own row is written first: its row lock orders racing writers of one team.
 */
function createTeamStore(pool: PgPoolLike, q: string): TeamStore {
  const base = createDirectoryStore(pool, q, TEAMS);
  const s = statementsOf(q, TEAMS);
  const clearMembers = sql(`DELETE FROM ${q}team_members WHERE team_id = @id`);
  const addMembers = sql(`INSERT INTO ${q}team_members (team_id, user_id)
    SELECT @id, m FROM unnest(@members::text[]) AS m ON CONFLICT DO NOTHING`);
  const byMember = sql(`SELECT ${columnList(TEAMS, "t")}
    FROM ${q}team_members m JOIN ${q}teams t ON t.id = m.team_id
    WHERE m.user_id = @user AND t.organization = @organization ORDER BY m.team_id`);

  const write = (statement: typeof s.insert, team: Team, clear: boolean) =>
    transaction(pool, async (client: Queryable) => {
      if ((await changed(client, statement, TEAMS.toRow(team))) !== 1) return false;
      if (clear) await changed(client, clearMembers, { id: team.id });
      if (team.members.length > 0) await changed(client, addMembers, { id: team.id, members: team.members });
      return true;
    });

  return {
    ...base,
    insert: (team) => write(s.insert, team, false),
    replace: (team) => write(s.update, team, true),
    // team_members rows go with the team (ON DELETE CASCADE), in the same statement.
    delete: base.delete,
    async listByMember(organization, user) {
      return (await rowsOf<TeamRow>(pool, byMember, { user, organization })).map(fromTeamRow);
    },
  };
}

export type { DirectoryStores } from "../sql/directory-tables.js";

export function createDirectoryStores(pool: PgPoolLike, q: string): DirectoryStores {
  return buildDirectoryStores({
    keyed: (spec) => createKeyedStore(pool, q, spec),
    keys: (spec) => {
      const { keys } = statementsOf(q, spec);
      return async () => (await rowsOf<{ key: string }>(pool, keys, {})).map((row) => row.key);
    },
    listed: (spec) => createDirectoryStore(pool, q, spec),
    teams: () => createTeamStore(pool, q),
  });
}
