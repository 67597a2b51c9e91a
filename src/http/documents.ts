import { conflict, invalid } from "../errors.js";

/** The parts of a JSON:API request document a route needs, after the envelope checks. */
export interface ResourceBody {
  id: string | undefined;
  attributes: Record<string, unknown>;
  relationships: Record<string, unknown>;
  /** The whole parsed document (for top-level members such as the deprecated `filter`). */
  document: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Checks the JSON:API envelope of a create/update body: `data` an object, `data.type` one of `types`
 * (always required, D23), `data.id` (when `pathId` is given) optional but equal to the path id, else
 * 409 (D23); `attributes`/`relationships` objects when present.
 */
export function readResourceBody(body: unknown, types: readonly string[], pathId?: string): ResourceBody {
  if (!isObject(body)) throw invalid("/data", "The request body must be a JSON:API document with a data object");
  const data = body.data;
  if (!isObject(data)) throw invalid("/data", "data must be an object");
  if (data.type === undefined) throw invalid("/data/type", "type is required");
  if (typeof data.type !== "string" || !types.includes(data.type)) {
    throw invalid("/data/type", `type must be ${types.map((t) => `"${t}"`).join(" or ")}`);
  }
  // On create a client id is ignored (ids are always generated, D9).
  if (pathId !== undefined && data.id !== undefined && data.id !== null) {
    if (typeof data.id !== "string") throw invalid("/data/id", "id must be a string");
    if (data.id !== pathId) throw conflict("data.id does not match the id in the URL");
  }
  const attributes = data.attributes ?? {};
  if (!isObject(attributes)) throw invalid("/data/attributes", "attributes must be an object");
  const relationships = data.relationships ?? {};
  if (!isObject(relationships)) throw invalid("/data/relationships", "relationships must be an object");
  return { id: pathId, attributes, relationships, document: body };
}
