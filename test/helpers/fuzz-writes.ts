import fc from "fast-check";
import { callbackBody, taskBody, workspaceTaskBody } from "./run-tasks.js";

/**
 * What the API fuzz needs to get a write past its body, so that every other part of the request
 * (path, query, credential) decides its answer (D30): a body each write route accepts, and the path
 * parameter under which the id a create answers with is known from then on.
 */

export type Known = Record<string, string[]>;

const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);
const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/);
const vars = (attributes: Record<string, unknown>) => ({ data: { type: "vars", attributes } });
const pick = (known: Known, param: string) => fc.constantFrom(...(known[param] ?? ["x"]));

/** A body the route would accept (ids taken from `known`), or undefined for a route without one. */
export function validBody(route: string, known: Known): fc.Arbitrary<unknown> | undefined {
  switch (route) {
    case "POST /workspaces/:workspace_id/vars":
      return key.map((k) => vars({ key: k, value: "v", category: "env" }));
    case "PATCH /workspaces/:workspace_id/vars/:variable_id":
      return fc.string({ maxLength: 8 }).map((value) => vars({ value }));
    case "POST /policy-sets/:policy_set_id/parameters":
      return key.map((k) => vars({ key: k, value: "v", category: "policy-set" }));
    case "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id":
      return fc.string({ maxLength: 8 }).map((value) => vars({ value }));
    case "POST /team-projects":
      return fc.constantFrom("read", "write", "admin").map((access) => ({
        data: {
          type: "team-projects",
          attributes: { access },
          relationships: { project: { data: { type: "projects", id: "prj-a" } }, team: { data: { type: "teams", id: "team-devs" } } },
        },
      }));
    case "PATCH /team-projects/:id":
      return fc.constantFrom("read", "write", "maintain").map((access) => ({ data: { type: "team-projects", attributes: { access } } }));
    case "POST /agent-pools/:agent_pool_id/authentication-tokens":
      return name.map((description) => ({ data: { type: "authentication-tokens", attributes: { description } } }));
    case "POST /organizations/:organization_name/tasks":
      return name.map((n) => taskBody({ name: n, url: `https://${n}.example/hook` }));
    case "PATCH /tasks/:task_id":
      return name.map((n) => taskBody({ name: n }));
    case "POST /workspaces/:workspace_id/tasks":
      return pick(known, "task_id").map((id) => workspaceTaskBody(id, { "enforcement-level": "advisory", stages: ["post_plan"] }));
    case "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id":
      return fc.constantFrom("advisory", "mandatory").map((level) => ({ data: { type: "workspace-tasks", attributes: { "enforcement-level": level } } }));
    case "POST /task-stages/:task_stage_id/actions/override":
      return fc.constant({ comment: "accepted" });
    case "PATCH /task-results/:task_result_id/callback":
      return fc.constant(callbackBody("running"));
    case "POST /runs/:run_id/comments":
      return fc.string({ minLength: 1, maxLength: 20 }).map((body) => ({ data: { type: "comments", attributes: { body: `${body}.` } } }));
    default:
      return undefined;
  }
}

/** The path parameter a create's new id fills from then on, so later writes find what earlier ones made. */
export const CREATED_PARAM: Record<string, string> = {
  "POST /workspaces/:workspace_id/vars": "variable_id",
  "POST /policy-sets/:policy_set_id/parameters": "parameter_id",
  "POST /team-projects": "id",
  "POST /agent-pools/:agent_pool_id/authentication-tokens": "token_id",
  "POST /organizations/:organization_name/tasks": "task_id",
  "POST /workspaces/:workspace_id/tasks": "workspace_task_id",
  "POST /runs/:run_id/comments": "comment_id",
};

/** Query parameters of every kind a route may declare, with valid and invalid values of each (D7, D8, D30). */
export const writeQuery = fc.array(
  fc.oneof(
    fc.tuple(fc.constant("include"), fc.constantFrom("nope", "workspace_tasks", "workspace-tasks.workspace", "run", "task_results,nope", "__proto__", "")),
    fc.tuple(fc.constantFrom("page[number]", "page[size]"), fc.constantFrom("1", "0", "101", "abc", "")),
    fc.tuple(fc.constant("sort"), fc.constantFrom("severity", "-created-at", "name", "")),
    fc.tuple(fc.constantFrom("filter[project][id]", "filter[status]", "x"), fc.string({ maxLength: 8 })),
  ),
  { maxLength: 3 },
);
