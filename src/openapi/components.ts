import * as z from "zod";
import type { ResourceDefinition } from "../http/jsonapi.js";
import { IncludedWorkspaceAttributes } from "../schemas/wire.js";
import { collectionDocument, ErrorDocument, includedObject, resourceDocument, resourceObject } from "./envelope.js";
import type { SuccessBody } from "./operations/types.js";

/** Component names people read in generated clients; a type not listed falls back to PascalCase. */
const NAMES: Record<string, string> = {
  vars: "WorkspaceVariable",
  "vars|policy-set-parameter": "PolicySetParameter",
  "team-projects": "TeamProject",
  "authentication-tokens": "AgentToken",
  tasks: "RunTask",
  "workspace-tasks": "WorkspaceRunTask",
  "task-stages": "TaskStage",
  "task-results": "TaskResult",
  "task-result-outcomes": "TaskResultOutcome",
  "delivery-attempts": "DeliveryAttempt",
  runs: "Run",
  workspaces: "Workspace",
  plans: "Plan",
  applies: "Apply",
  "run-events": "RunEvent",
  comments: "Comment",
  "policy-checks": "PolicyCheck",
  users: "User",
};
const pascal = (s: string): string => s.replace(/(^|[-_|.])(\w)/g, (_, __, c: string) => c.toUpperCase());
const keyOf = (type: string, variant?: string): string => (variant && variant !== "default" ? `${type}|${variant}` : type);
export const componentName = (type: string, variant?: string): string => NAMES[keyOf(type, variant)] ?? pascal(keyOf(type, variant));

/**
 * The response components of one document: every resource object, the documents built from them,
 * and the error document, registered by name so the conversion writes `$ref`s between them.
 */
export function createComponents(definitions: readonly ResourceDefinition[]) {
  const registry = z.registry<{ id: string }>();
  const resources = new Map<string, z.ZodObject>();
  const add = (key: string, schema: z.ZodObject, name: string) => {
    resources.set(key, schema);
    registry.add(schema, { id: name });
  };
  for (const def of definitions) add(keyOf(def.type, def.schema), resourceObject(def), componentName(def.type, def.schema));
  add("workspaces", includedObject("workspaces", IncludedWorkspaceAttributes, { organization: "organizations", project: "projects" }), componentName("workspaces"));
  registry.add(ErrorDocument, { id: "ErrorDocument" });

  const documents = new Map<string, z.ZodType>();
  const resource = (type: string, variant?: string): z.ZodObject => {
    const found = resources.get(keyOf(type, variant));
    if (!found) throw new Error(`OpenAPI: no resource definition for ${keyOf(type, variant)}`);
    return found;
  };
  const included = (types: readonly string[] | undefined): z.ZodType | undefined => {
    if (!types || types.length === 0) return undefined;
    const members = types.map((t) => resource(t));
    return members.length === 1 ? members[0] : z.union(members as [z.ZodObject, z.ZodObject, ...z.ZodObject[]]);
  };

  /** The registered document schema of a JSON:API success body, created once per shape. */
  function document(body: Exclude<SuccessBody, null | { media: string }>): string {
    const base = componentName("resource" in body ? body.resource : body.collection, body.variant);
    const name = "resource" in body ? `${base}Document` : `${base}List${body.paging === "never" ? "" : pascal(body.paging)}`;
    if (documents.has(name)) return name;
    const item = resource("resource" in body ? body.resource : body.collection, body.variant);
    const withIncluded = included(body.included);
    const schema = "resource" in body ? resourceDocument(item, withIncluded) : collectionDocument(item, body.paging, withIncluded);
    documents.set(name, schema);
    registry.add(schema, { id: name });
    return name;
  }

  return {
    document,
    /** Every registered component as JSON Schema 2020-12, `$ref`s pointing at `#/components/schemas/`. */
    toJsonSchemas(): Record<string, object> {
      const { schemas } = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}`, target: "draft-2020-12" });
      return Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, stripRoot(schema)]));
    },
  };
}

/** A component is embedded in the document: its own `$schema` and `$id` would re-root its `$ref`s. */
export function stripRoot(schema: object): object {
  const { $schema: _schema, $id: _id, ...rest } = schema as Record<string, unknown>;
  return rest;
}
