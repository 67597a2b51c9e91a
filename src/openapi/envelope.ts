import * as z from "zod";
import { ERROR_CODES, TITLE_BY_CODE } from "../errors.js";
import { kebab, type RelationshipDefinition, type ResourceDefinition } from "../http/jsonapi.js";

/**
 * The JSON:API envelope as zod schemas, built from the same resource definitions the writer uses:
 * attributes come from each definition's schema, relationships and links from its
 * relationship table. Everything is strict, so a member the document does not name fails the
 * response check.
 */

const linkage = (type: string | undefined) => z.strictObject({ type: type === undefined ? z.string() : z.literal(type), id: z.string() });

/** camelCase attribute names as the serializer writes them (kebab-case); values keep their schemas. */
export const wireObject = (schema: z.ZodObject): z.ZodObject =>
  z.strictObject(Object.fromEntries(Object.entries(schema.shape).map(([name, value]) => [kebab(name), value as z.ZodType])));

function relationshipMember(rel: RelationshipDefinition): z.ZodType {
  const one = linkage(typeof rel.type === "string" ? rel.type : undefined);
  const data = rel.many ? z.array(one) : one.nullable();
  const member = z.strictObject({ data, ...(rel.related ? { links: z.strictObject({ related: z.string() }) } : {}) });
  // Present only when asked for with an include (D31).
  return rel.optional ? member.optional() : member;
}

/** One resource object of `def`: id, type, attributes, relationships and links. */
export function resourceObject(def: ResourceDefinition): z.ZodObject {
  const relationships = Object.entries(def.relationships ?? {}).map(([name, rel]) => [kebab(name), relationshipMember(rel)] as const);
  const links = Object.fromEntries((def.optionalLinks ?? []).map((name) => [name, z.string().optional()]));
  return z.strictObject({
    id: z.string(),
    type: z.literal(def.type),
    attributes: wireObject(def.attributes),
    ...(relationships.length > 0 ? { relationships: z.strictObject(Object.fromEntries(relationships)) } : {}),
    ...(def.self ? { links: z.strictObject({ self: z.string(), ...links }) } : {}),
  });
}

/** An included resource written by hand (runs, workspaces): its attributes and to-one relationships. */
export function includedObject(type: string, attributes: z.ZodObject, relationships: Record<string, string>): z.ZodObject {
  const members = Object.entries(relationships).map(([name, target]) => [name, z.strictObject({ data: linkage(target) })] as const);
  return z.strictObject({
    id: z.string(),
    type: z.literal(type),
    attributes: wireObject(attributes),
    relationships: z.strictObject(Object.fromEntries(members)),
    links: z.strictObject({ self: z.string() }),
  });
}

/** decision D7: absolute page links and `meta.pagination`. */
export const PaginationLinks = z.strictObject({
  self: z.string(),
  first: z.string(),
  prev: z.string().nullable(),
  next: z.string().nullable(),
  last: z.string(),
});
const count = z.number().int().min(0);
export const PaginationMeta = z.strictObject({
  pagination: z.strictObject({
    "current-page": count,
    "page-size": count,
    "prev-page": count.nullable(),
    "next-page": count.nullable(),
    "total-pages": count,
    "total-count": count,
  }),
});

export const resourceDocument = (resource: z.ZodType, included?: z.ZodType) =>
  z.strictObject({ data: resource, ...(included ? { included: z.array(included).optional() } : {}) });

/** `always`: every answer is paged (D7); `optional`: paged only when the request names a page. */
export function collectionDocument(resource: z.ZodType, paging: "always" | "optional" | "never", included?: z.ZodType) {
  const page =
    paging === "always"
      ? { links: PaginationLinks, meta: PaginationMeta }
      : paging === "optional"
        ? { links: PaginationLinks.optional(), meta: PaginationMeta.optional() }
        : {};
  return z.strictObject({ data: z.array(resource), ...page, ...(included ? { included: z.array(included).optional() } : {}) });
}

/** decision D5: `status` as a string, a lower-case title, an optional detail and source. */
export const ErrorDocument = z.strictObject({
  errors: z
    .array(
      z.strictObject({
        status: z.string().regex(/^[45]\d\d$/),
        title: z.enum(ERROR_CODES.map((code) => TITLE_BY_CODE[code]) as [string, ...string[]]),
        detail: z.string().optional(),
        source: z.union([z.strictObject({ pointer: z.string() }), z.strictObject({ parameter: z.string() })]).optional(),
      }),
    )
    .min(1),
});
