/**
 * What the `RevisionStore` counters follow, the same in both SQL adapters (their triggers differ in
 * syntax only): every write to these tables bumps the `directory` scope, because their rows feed a
 * principal and its permissions (`DIRECTORY_SCOPE`); a variable write bumps `vars:<kind>:<owner>`.
 */
export const DIRECTORY_TABLES = [
  "organizations",
  "users",
  "projects",
  "workspaces",
  "teams",
  "team_members",
  "policy_sets",
  "agent_pools",
  "team_projects",
] as const;

/**
 * Every api_tokens column but `last_used_at`: a touch changes no decision, so it bumps nothing.
 * Spelled out, not derived from the column list: released migrations use it, and their text must
 * never change when a later migration adds a column.
 */
export const API_TOKEN_DECISION_COLUMNS = "id, digest, organization, kind, user_id, team_id, description, created_at";

/** The scope of a variable row's owner, as SQL over a trigger's `NEW` or `OLD` row. */
export const varsScopeOf = (row: "NEW" | "OLD"): string => `'vars:' || ${row}.owner_kind || ':' || ${row}.owner_id`;
