import JSONAPISerializer, { type RelationshipOptions } from "json-api-serializer";
import type * as z from "zod";
import { ApiError, TITLE_BY_CODE } from "../errors.js";

/** The media type of every response body (D6). */
export const MEDIA_TYPE = "application/vnd.api+json";

/** A relationship of a resource: the data holds an id string (linkage only) or null. */
export interface RelationshipDefinition {
  /** Wire type of the related resource, or a function of the parent's data. */
  type: string | ((parent: Record<string, unknown>) => string);
  /** To-many: the data holds an array of ids (linkage list). */
  many?: boolean;
  /** `links.related` of the relationship, from the parent's data. */
  related?: (parent: Record<string, unknown>) => string | undefined;
  /**
   * Written only when the data holds it (an `include` asked for it, D31): a document a client of
   * the real API reads carries no member it does not know unless asked (D1).
   */
  optional?: boolean;
}

/**
 * How one JSON:API resource type is written. Data objects are camelCase; attributes are converted to
 * kebab-case on the wire. Only `attributes` are ever written, so an internal field (a sealed value, a
 * digest) can never leak into a response by accident.
 */
export interface ResourceDefinition {
  type: string;
  /** Named variant when one wire type is written in two shapes (e.g. `vars` of a policy set). */
  schema?: string;
  /**
   * The attributes, keyed as the data objects hold them (camelCase), each described by its wire
   * value (src/schemas/wire.ts). The writer writes exactly these keys and the OpenAPI document
   * describes them from the same schema.
   */
  attributes: z.ZodObject;
  /** Attributes whose values are free-form maps: their keys are written as given, never converted. */
  verbatim?: readonly string[];
  self?: (data: Record<string, unknown>) => string;
  /** Links besides `self` that some resources carry (documented as optional), e.g. an outcome's `body`. */
  optionalLinks?: readonly string[];
  relationships?: Record<string, RelationshipDefinition>;
}

export interface Pagination {
  number: number;
  size: number;
  total: number;
}

export interface ListOptions {
  /** The base of the absolute pagination links: the route context's `url`, never the raw request URL (D7). */
  url?: URL;
  pagination?: Pagination;
}

export type JsonApiDocument = Record<string, unknown>;

/**
 * Types that appear only as relationship linkage (`{ type, id }`): the serializer must know them.
 * A resource definition of the same type replaces the bare registration.
 */
const LINKAGE_TYPES = [
  "organizations",
  "projects",
  "workspaces",
  "teams",
  "users",
  "policy-sets",
  "policy-evaluations",
  "agent-pools",
  "runs",
  "tasks",
  "workspace-tasks",
  "task-stages",
  "task-results",
  "task-result-outcomes",
  // The read side of a run (D24).
  "plans",
  "applies",
  "configuration-versions",
  "cost-estimates",
  "comments",
  "run-events",
  "policy-checks",
] as const;

/** One serializer per runplane instance, holding every resource type the routes write. */
export function createJsonApi(definitions: readonly ResourceDefinition[]) {
  const serializer = new JSONAPISerializer({ convertCase: "kebab-case", jsonapiObject: false });
  const verbatimBySchema = new Map<string, readonly string[]>();
  const optionalBySchema = new Map<string, readonly string[]>();
  const defined = new Set(definitions.map((d) => d.type));
  for (const type of LINKAGE_TYPES) if (!defined.has(type)) serializer.register(type, {});
  for (const def of definitions) {
    const relationships: Record<string, RelationshipOptions> = {};
    for (const [name, rel] of Object.entries(def.relationships ?? {})) {
      relationships[name] = {
        type: (_: unknown, parent: Record<string, unknown>) => (typeof rel.type === "string" ? rel.type : rel.type(parent)),
        ...(rel.related ? { links: (parent: Record<string, unknown>) => ({ related: rel.related!(parent) }) } : {}),
      };
    }
    const verbatim = def.verbatim ?? [];
    serializer.register(def.type, def.schema ?? "default", {
      whitelist: Object.keys(def.attributes.shape).filter((a) => !verbatim.includes(a)),
      ...(def.self ? { links: (d: Record<string, unknown>) => ({ self: def.self!(d) }) } : {}),
      relationships,
    });
    verbatimBySchema.set(`${def.type}|${def.schema ?? "default"}`, verbatim);
    const optional = Object.entries(def.relationships ?? {}).filter(([, rel]) => rel.optional).map(([name]) => name);
    if (optional.length > 0) optionalBySchema.set(`${def.type}|${def.schema ?? "default"}`, optional);
  }

  // Free-form maps (tags, status timestamps) keep their keys: the serializer would kebab-case them.
  const restoreVerbatim = (type: string, schema: string, item: Record<string, unknown>, out: Record<string, unknown>) => {
    const verbatim = verbatimBySchema.get(`${type}|${schema}`) ?? [];
    if (verbatim.length === 0) return;
    const attributes = (out.attributes ?? (out.attributes = {})) as Record<string, unknown>;
    // An absent map stays absent: a run the host says nothing of has no status timestamps.
    for (const name of verbatim) if (item[name] !== undefined) attributes[kebab(name)] = item[name];
  };

  // The serializer writes a relationship's links even without data: an optional one not asked for goes.
  const dropAbsent = (type: string, schema: string, item: Record<string, unknown>, out: Record<string, unknown>) => {
    const relationships = out.relationships as Record<string, unknown> | undefined;
    for (const name of optionalBySchema.get(`${type}|${schema}`) ?? []) if (item[name] === undefined) delete relationships?.[kebab(name)];
  };
  const finish = (type: string, schema: string, item: Record<string, unknown>, out: Record<string, unknown>) => {
    restoreVerbatim(type, schema, item, out);
    dropAbsent(type, schema, item, out);
  };

  return {
    resource(type: string, data: Record<string, unknown>, schema = "default"): JsonApiDocument {
      const doc = serializer.serialize(type, data, schema) as { data: Record<string, unknown> };
      finish(type, schema, data, doc.data);
      return doc;
    },
    collection(type: string, items: readonly Record<string, unknown>[], options: ListOptions = {}, schema = "default"): JsonApiDocument {
      const doc = serializer.serialize(type, items, schema) as { data: Record<string, unknown>[] };
      doc.data.forEach((out, i) => finish(type, schema, items[i]!, out));
      if (!options.pagination) return doc;
      const { links, meta } = paginationDocument(options.url!, options.pagination);
      return { data: doc.data, links, meta };
    },
  };
}
export type JsonApi = ReturnType<typeof createJsonApi>;

export const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** decision D7: `meta.pagination` and absolute `links` with `%5B`/`%5D`. */
export function paginationDocument(url: URL, page: Pagination) {
  const totalPages = Math.max(1, Math.ceil(page.total / page.size));
  const link = (n: number | null): string | null => {
    if (n === null) return null;
    const u = new URL(url);
    u.searchParams.set("page[number]", String(n));
    u.searchParams.set("page[size]", String(page.size));
    // The one canonical order (src/http/links.ts): by parameter name.
    u.searchParams.sort();
    return u.toString();
  };
  const prev = page.number > 1 ? Math.min(page.number - 1, totalPages) : null;
  const next = page.number < totalPages ? page.number + 1 : null;
  return {
    links: { self: link(page.number), first: link(1), prev: link(prev), next: link(next), last: link(totalPages) },
    meta: {
      pagination: {
        "current-page": page.number,
        "page-size": page.size,
        "prev-page": prev,
        "next-page": next,
        "total-pages": totalPages,
        "total-count": page.total,
      },
    },
  };
}

/** decision D5: the error document, `status` as a string, lower-case titles. */
export function errorDocument(error: ApiError): JsonApiDocument {
  return {
    errors: error.items.map((item) => ({
      status: String(error.status),
      title: TITLE_BY_CODE[error.code],
      ...(item.detail !== undefined ? { detail: item.detail } : {}),
      ...(item.pointer !== undefined ? { source: { pointer: item.pointer } } : {}),
      ...(item.parameter !== undefined ? { source: { parameter: item.parameter } } : {}),
    })),
  };
}
