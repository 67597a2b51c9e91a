import { readFileSync } from "node:fs";
import * as z from "zod";

/**
 * go-tfe's view of the wire as zod schemas, built from the jsonapi tags of its
 * structs kept in test/fixtures/go-tfe/structs.json (the run read side's fixture, extended with the
 * six areas). A resource must carry every attribute and relationship go-tfe names, with a value that
 * hashicorp/jsonapi decodes into the field: a time tagged `iso8601` is parsed with a literal `Z`,
 * `rfc3339` with Go's time.RFC3339 (both take fractional seconds). Null only where the type says
 * so (`?` or `|null`), as the API reference documents it. Unknown members are allowed: go-tfe
 * ignores them.
 */

type FieldType = string | { [key: string]: FieldType } | [FieldType];
interface Struct {
  primary: string;
  attributes: Record<string, FieldType>;
  relations: Record<string, ["one" | "many", string]>;
}
const STRUCTS = JSON.parse(readFileSync(new URL("../fixtures/go-tfe/structs.json", import.meta.url), "utf8")) as Record<string, Struct>;
/** A struct of the fixture, by its go-tfe name (`Run`, `TaskStage`, ...). */
export type StructName = string;

/** hashicorp/jsonapi's iso8601 layout is `2006-01-02T15:04:05Z`; Go parsing accepts a fraction after the seconds. */
const ISO8601 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** Go's time.RFC3339 layout `2006-01-02T15:04:05Z07:00`, fraction allowed when parsing. */
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

const SCALARS: Record<string, () => z.ZodType> = {
  string: () => z.string(),
  bool: () => z.boolean(),
  int: () => z.number().int(),
  // As test/openapi/go-tfe-fidelity.test.ts reads the fixture: null is a time go-tfe leaves zero (`force-cancel-available-at`).
  iso8601: () => z.string().regex(ISO8601, "go-tfe parses iso8601 with a literal Z").nullable(),
  rfc3339: () => z.string().regex(RFC3339, "not RFC 3339"),
  "string[]": () => z.array(z.string()),
  any: () => z.unknown(),
};

function fieldSchema(type: FieldType): z.ZodType {
  if (Array.isArray(type)) return z.array(fieldSchema(type[0]));
  if (typeof type === "object") {
    if ("*" in type) return z.record(z.string(), fieldSchema(type["*"]!));
    return z.object(Object.fromEntries(Object.entries(type).map(([k, t]) => [k, fieldSchema(t)])));
  }
  const optional = type.endsWith("?");
  const nullable = type.endsWith("|null");
  const base = type.replace(/\?$/, "").replace(/\|null$/, "");
  const make = SCALARS[base];
  if (!make) throw new Error(`structs.json: unknown field type ${type}`);
  if (optional) return make().nullable().optional();
  return nullable ? make().nullable() : make();
}

const linkage = (type: string) => z.object({ type: z.literal(type), id: z.string().min(1) });

/** One resource object as go-tfe decodes it into `name`. */
export function resourceSchema(name: StructName): z.ZodType {
  const struct = STRUCTS[name];
  if (!struct?.primary) throw new Error(`structs.json has no struct ${name}`);
  const attributes = z.object(Object.fromEntries(Object.entries(struct.attributes).map(([k, t]) => [k, fieldSchema(t)])));
  const relations = Object.entries(struct.relations).map(([rel, [kind, type]]) => [rel, z.object({ data: kind === "many" ? z.array(linkage(type)) : linkage(type).nullable() })] as const);
  return z.object({
    id: z.string().min(1),
    type: z.literal(struct.primary),
    attributes,
    ...(relations.length > 0 ? { relationships: z.object(Object.fromEntries(relations)) } : {}),
  });
}

/** The go-tfe struct that decodes an included resource of each type runplane may include. */
const INCLUDED_STRUCTS: Record<string, StructName> = {
  runs: "Run",
  plans: "Plan",
  applies: "Apply",
  users: "User",
  comments: "Comment",
  workspaces: "Workspace",
  "task-stages": "TaskStage",
  "task-results": "TaskResult",
  "workspace-tasks": "WorkspaceRunTask",
  "configuration-versions": "ConfigurationVersion",
  "ingress-attributes": "IngressAttributes",
};

/** An included resource decodes into the struct of its type; a type go-tfe has no struct for fails. */
const IncludedResource = z.unknown().superRefine((value, ctx) => {
  const type = (value as { type?: unknown } | null)?.type;
  const name = typeof type === "string" ? INCLUDED_STRUCTS[type] : undefined;
  if (name === undefined) {
    ctx.addIssue({ code: "custom", message: `no go-tfe struct decodes an included ${String(type)}` });
    return;
  }
  const result = resourceSchema(name).safeParse(value);
  for (const issue of result.success ? [] : result.error.issues) ctx.addIssue({ code: "custom", path: issue.path, message: `${name}: ${issue.message}` });
});

/** go-tfe's Pagination (`meta.pagination`), decoded with encoding/json: null counts read as 0. */
const Pagination = z.object({
  "current-page": z.number().int(),
  "prev-page": z.number().int().nullable(),
  "next-page": z.number().int().nullable(),
  "total-pages": z.number().int(),
  "total-count": z.number().int(),
});

/** `Read`, `Create`, `Update`: one resource, whatever it includes. */
export const oneDocument = (name: StructName) => z.object({ data: resourceSchema(name), included: z.array(IncludedResource).optional() });

/**
 * `List`: resources and go-tfe's pagination. `optional`: a list runplane pages only when asked (D7),
 * which go-tfe reads with a nil Pagination; `never`: a list go-tfe reads without one (run events).
 */
export const listDocument = (name: StructName, paging: "always" | "optional" | "never" = "always") => {
  const meta = z.object({ pagination: Pagination });
  return z.object({
    data: z.array(resourceSchema(name)),
    included: z.array(IncludedResource).optional(),
    ...(paging === "never" ? {} : { meta: paging === "always" ? meta : meta.optional() }),
  });
};

/** Every way `value` does not decode: empty when it does. */
export function problems(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}
