import * as z from "zod";
import { TITLE_BY_CODE, ERROR_CODES, STATUS_BY_CODE } from "../errors.js";
import { MEDIA_TYPE, type ResourceDefinition } from "../http/jsonapi.js";
import { acceptedParameters } from "../http/query.js";
import { routeKey, type Route } from "../http/types.js";
import type { Dialect } from "../schemas/common.js";
import { RUNPLANE_VERSION } from "../services/run-task-settings.js";
import { createComponents, stripRoot } from "./components.js";
import { configurationOperations } from "./operations/configuration.js";
import { runTaskOperations } from "./operations/run-tasks.js";
import { runReadOperations } from "./operations/runs.js";
import type { OperationDoc, QueryParam, RequestBody, Security } from "./operations/types.js";

export interface OpenApiInput {
  routes: readonly Route[];
  definitions: readonly ResourceDefinition[];
  dialect: Dialect;
  basePath: string;
}

/** An OpenAPI 3.1 document as plain JSON (`JSON.stringify` it to serve it). */
export type OpenApiDocument = Record<string, unknown> & { openapi: "3.1.0"; paths: Record<string, Record<string, unknown>> };

const SECURITY: Record<Security, Record<string, string[]>[]> = {
  api: [{ apiToken: [] }],
  "access-token": [{ accessToken: [] }],
  "api-or-access-token": [{ apiToken: [] }, { accessToken: [] }],
  none: [],
};
const TITLE_BY_STATUS = new Map<number, string>(ERROR_CODES.map((code) => [STATUS_BY_CODE[code], TITLE_BY_CODE[code]]));
const RETRY_AFTER = {
  headers: { "Retry-After": { description: "Seconds to wait before sending the request again (D28).", schema: { type: "integer", minimum: 1 } } },
};
/** decision D33: what every answer carries with the rate limit on; declared once, referred to by successes and 429s. */
const RATE_LIMIT_HEADERS = {
  "X-RateLimit-Limit": { description: "Requests per second allowed to this credential; for a task result callback, to this result (D33).", schema: { type: "string" } },
  "X-RateLimit-Remaining": { description: "Whole requests the credential may still send at once (D33).", schema: { type: "string" } },
  "X-RateLimit-Reset": { description: 'Seconds, as a decimal ("0.034"), until the next request is allowed (D33).', schema: { type: "string" } },
};
const RATE_LIMIT_REFS = Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const RATE_LIMITED = {
  headers: {
    "Retry-After": { description: "Whole seconds to wait before sending the request again (D33).", schema: { type: "integer", minimum: 1 } },
    ...RATE_LIMIT_REFS,
  },
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const inputSchema = (schema: z.ZodType): object => stripRoot(z.toJSONSchema(schema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }));

/** The operation table for `dialect`; every route must have exactly one entry and every entry a route. */
export function operationsFor(routes: readonly Route[], dialect: Dialect): Map<Route, OperationDoc> {
  const table: Record<string, OperationDoc> = { ...configurationOperations(dialect), ...runTaskOperations(), ...runReadOperations() };
  const keys = new Set(routes.map(routeKey));
  const undocumented = [...keys].filter((k) => !(k in table));
  const stale = Object.keys(table).filter((k) => !keys.has(k));
  if (undocumented.length > 0 || stale.length > 0) {
    throw new Error(`OpenAPI operation table out of step with the routes: undocumented ${undocumented.join(", ") || "none"}; no route for ${stale.join(", ") || "none"}`);
  }
  // decision D30: the router accepts exactly the query a route declares; the document says the same.
  const drifted = routes.filter((r) => !sameNames(acceptedParameters(r.query), (table[routeKey(r)]!.query ?? []).map((q) => q.name)));
  if (drifted.length > 0) throw new Error(`OpenAPI query parameters differ from what the routes accept: ${drifted.map(routeKey).join(", ")}`);
  return new Map(routes.map((r) => [r, table[routeKey(r)]!]));
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");

function parameters(route: Route, query: readonly QueryParam[] = []): object[] {
  const inPath = route.path.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1));
  return [
    ...inPath.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
    ...query.map((q) => ({ name: q.name, in: "query", required: q.required ?? false, description: q.description, schema: inputSchema(q.schema) })),
  ];
}

function requestBody(body: RequestBody): object {
  const schema =
    "document" in body
      ? body.document
      : z.object({
          data: z.object({
            type: z.enum(body.types as [string, ...string[]]),
            id: z.string().optional(),
            attributes: body.attributes,
            ...(body.relationships ? { relationships: body.relationships } : {}),
          }),
        });
  const json = { schema: inputSchema(schema) };
  // decision D6: application/vnd.api+json or application/json; the override takes plain JSON first (go-tfe).
  const content = "document" in body && body.plainJson ? { "application/json": json, [MEDIA_TYPE]: json } : { [MEDIA_TYPE]: json, "application/json": json };
  return { required: "document" in body ? body.required : (body.required ?? true), content };
}

function errorStatuses(op: OperationDoc): number[] {
  // decision D33: any route may be rate limited (the option `rateLimit`).
  const statuses = new Set<number>([429, 500, ...(op.errors ?? [])]);
  // decision D28: whatever reads a credential reads the storage, which may be away (503).
  if ((op.security ?? "api") !== "none") for (const s of [401, 404, 503]) statuses.add(s);
  if (op.body) for (const s of [400, 413, 415, 422]) statuses.add(s);
  // decisions D7, D26: a page parameter out of range or not an integer is 422.
  if (op.query?.some((q) => q.name.startsWith("page["))) statuses.add(422);
  for (const s of op.never ?? []) statuses.delete(s);
  return [...statuses].sort((a, b) => a - b);
}

/** The OpenAPI 3.1 description of every route, generated from the zod schemas and the resource definitions. */
export function buildOpenApiDocument(input: OpenApiInput): OpenApiDocument {
  const components = createComponents(input.definitions);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [route, op] of operationsFor(input.routes, input.dialect)) {
    const success = op.success.body;
    const content =
      success === null
        ? undefined
        : "media" in success
          ? { [success.media]: { schema: success.format === "json" ? {} : { type: "string", contentMediaType: success.media } } }
          : { [MEDIA_TYPE]: { schema: ref(components.document(success)) } };
    const headers = { ...op.success.headers, ...RATE_LIMIT_REFS };
    const responses: Record<string, object> = { [op.success.status]: { description: op.summary, headers, ...(content ? { content } : {}) } };
    for (const status of errorStatuses(op)) {
      responses[status] = { description: TITLE_BY_STATUS.get(status)!, ...(status === 503 ? RETRY_AFTER : status === 429 ? RATE_LIMITED : {}), content: { [MEDIA_TYPE]: { schema: ref("ErrorDocument") } } };
    }
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[/:_-]+(\w)/g, (_, c: string) => c.toUpperCase())}`,
      tags: [op.tag],
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      parameters: parameters(route, op.query),
      ...(op.body ? { requestBody: requestBody(op.body) } : {}),
      responses,
      security: SECURITY[op.security ?? "api"],
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "runplane: HCP Terraform v2 API",
      version: RUNPLANE_VERSION,
      description: `Run tasks, task stages and results, workspace variables, policy set parameters, team access to projects and agent tokens, in the \`${input.dialect}\` dialect (D1). With option \`rateLimit\`, every answer carries the \`X-RateLimit-*\` headers (declared on successes and 429s) and any path but \`/ping\` may answer 429 (D33).`,
    },
    servers: [{ url: input.basePath === "" ? "/" : input.basePath }],
    paths,
    components: {
      schemas: components.toJsonSchemas(),
      headers: RATE_LIMIT_HEADERS,
      securitySchemes: {
        apiToken: { type: "http", scheme: "bearer", description: "An API token (user, team or organization)." },
        accessToken: { type: "http", scheme: "bearer", description: "The `access_token` of the run task request (callback and artifacts)." },
      },
    },
    "x-runplane-dialect": input.dialect,
  };
}
