/**
 * decision D41: the team owners flag and one team name per organization, one migration step for
 * both SQL adapters (`q`: the PostgreSQL schema prefix, "" on SQLite). A database migrated before
 * it keeps what its teams could do: a team named "owners" is marked owners (it acted as owners by
 * its name until now), and a name taken twice in one organization keeps it on the team with the
 * lowest id while the others get their id appended, so the unique index can be built.
 */
export const teamOwnersSql = (q: string): string => `
  ALTER TABLE ${q}teams ADD COLUMN owners integer NOT NULL DEFAULT 0 CHECK (owners IN (0, 1));
  UPDATE ${q}teams SET owners = 1 WHERE name = 'owners';
  UPDATE ${q}teams SET name = name || ' (' || id || ')'
    WHERE EXISTS (SELECT 1 FROM ${q}teams o WHERE o.organization = ${q}teams.organization AND o.name = ${q}teams.name AND o.id < ${q}teams.id);
  CREATE UNIQUE INDEX teams_unique_name ON ${q}teams (organization, name);
`;
